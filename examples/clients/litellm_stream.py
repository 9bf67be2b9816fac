"""LiteLLM, `litellm.completion(..., stream=True)` with `api_base`, the chunks collected and rebuilt
with `litellm.stream_chunk_builder(chunks, messages=...)` as LiteLLM's streaming docs show; prints the
rebuilt message's tool_calls. LiteLLM turns every provider's stream into OpenAI-shaped chunks.
Usage: python litellm_stream.py openai-chat | anthropic | gemini | ollama

LITELLM_LOCAL_MODEL_COST_MAP=True keeps `import litellm` from fetching its cost map from the
network (it would fail here and retry for seconds before falling back to the bundled copy).
LiteLLM prints notes on stdout (`Provider List: …` when a lookup of the stub model's name misses,
get_llm_provider_logic.py), so its calls run with stdout sent to stderr: stdout is the contract's."""

import contextlib
import os
import sys

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import litellm  # noqa: E402

from tools import MODEL, PROMPT, emit, openai_base_url, parameters, tool_names  # noqa: E402

mode = sys.argv[1] if len(sys.argv) > 1 else "openai-chat"
base = os.environ.get("SSE_REPLAY_URL")
model, api_base, api_key = {
    "openai-chat": (f"openai/{MODEL}", openai_base_url(), "sk-dummy"),
    "anthropic": ("anthropic/claude-stub", os.environ.get("ANTHROPIC_BASE_URL") or base, "sk-ant-dummy"),
    "gemini": ("gemini/gemini-stub", os.environ.get("GEMINI_BASE_URL") or base, "gemini-dummy"),
    "ollama": ("ollama_chat/llama-stub", os.environ.get("OLLAMA_HOST") or base, None),
}.get(mode, (None, None, None))
if model is None:
    sys.exit(f"unknown mode {mode} (expected openai-chat, anthropic, gemini or ollama)")

messages = [{"role": "user", "content": PROMPT}]
tools = [
    {"type": "function", "function": {"name": n, "description": n, "parameters": parameters(n)}}
    for n in tool_names()
]
with contextlib.redirect_stdout(sys.stderr):
    response = litellm.completion(
        model=model,
        api_base=api_base,
        api_key=api_key,
        messages=messages,
        tools=tools,
        stream=True,
        max_tokens=1024,
        num_retries=0,
    )
    chunks = [chunk for chunk in response]
    message = litellm.stream_chunk_builder(chunks, messages=messages).choices[0].message

emit(
    [
        {"name": tc.function.name, "arguments": tc.function.arguments, "id": tc.id}
        for tc in message.tool_calls or []
    ]
)
