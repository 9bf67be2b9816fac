"""The code under test in the pytest example: openai-python's streaming helper
(``client.chat.completions.stream()``, then ``get_final_completion()``), as its guide shows, and the
tool calls it assembled in the client contract's shape.

Also a client for ``sse-replay test`` (``python openai_python_client.py``: it reads
``OPENAI_BASE_URL`` and ``SSE_REPLAY_TOOLS``, which the harness sets, and prints the calls), so the
CI script can check that pytest's verdicts equal ``sse-replay test``'s on the same cases.
"""

import json
import os
import sys

import openai


def tool_calls(base_url, tools):
    """Streams one chat completion from ``base_url`` and returns its tool calls."""
    client = openai.OpenAI(base_url=base_url, api_key="sk-sse-replay-dummy", max_retries=0, timeout=30)
    schemas = [
        {"type": "function", "function": {"name": name, "parameters": {"type": "object"}}}
        for name in tools
    ]
    with client.chat.completions.stream(
        model="gpt-stub",
        messages=[{"role": "user", "content": "What is the weather in Shenzhen?"}],
        tools=schemas,
    ) as stream:
        completion = stream.get_final_completion()
    calls = completion.choices[0].message.tool_calls or []
    return [
        {"name": c.function.name, "arguments": c.function.arguments, "id": c.id}
        for c in calls
    ]


if __name__ == "__main__":
    tools = json.loads(os.environ.get("SSE_REPLAY_TOOLS", "[]"))
    print(json.dumps(tool_calls(os.environ["OPENAI_BASE_URL"], tools)))
    sys.exit(0)
