"""Anthropic Python SDK, `client.messages.stream()`: the final message's tool_use blocks.
The SDK reads ANTHROPIC_BASE_URL (without /v1) itself."""

import os

from anthropic import Anthropic

from tools import PROMPT, anthropic_tools, emit

base = os.environ.get("ANTHROPIC_BASE_URL") or os.environ.get("SSE_REPLAY_URL")
client = Anthropic(base_url=base, api_key="sk-ant-dummy", max_retries=0)
with client.messages.stream(
    model="claude-stub",
    max_tokens=1024,
    messages=[{"role": "user", "content": PROMPT}],
    tools=anthropic_tools(),
) as stream:
    for _event in stream:
        pass
    message = stream.get_final_message()

emit([{"name": b.name, "arguments": b.input, "id": b.id} for b in message.content if b.type == "tool_use"])
