"""Cohere Python SDK (`cohere.ClientV2.chat_stream`), the tool calls assembled from its typed
events as Cohere's streaming guide does it: `tool-call-start` opens a call (id, name, first
arguments), `tool-call-delta` appends an arguments fragment, keyed by the event's index. The SDK
reads CO_API_URL (the server; `sse-replay test` sets it) and CO_API_KEY itself."""

import json

import cohere

from tools import PROMPT, chat_tools, emit

client = cohere.ClientV2()
calls = {}
for event in client.chat_stream(
    model="command-r",
    messages=[{"role": "user", "content": PROMPT}],
    tools=chat_tools(),
):
    if event.type == "tool-call-start":
        tc = event.delta.message.tool_calls
        calls[event.index] = {
            "id": tc.id,
            "name": tc.function.name,
            "arguments": tc.function.arguments or "",
        }
    elif event.type == "tool-call-delta":
        calls[event.index]["arguments"] += event.delta.message.tool_calls.function.arguments or ""

emit(
    [
        {"name": c["name"], "arguments": json.loads(c["arguments"] or "{}"), "id": c["id"]}
        for _, c in sorted(calls.items())
    ]
)
