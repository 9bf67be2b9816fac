"""Shared by the Python example clients: the tools every bundled recording calls, and output.

The schemas are deliberately loose (no required fields): the recordings call get_weather with
{city, days} or {location, unit, days, hourly} and get_time with {city, days} or {timezone}.
"""

import json
import os
import sys

MODEL = "gpt-stub"
PROMPT = "What is the weather in Shenzhen, and the time in Hangzhou?"

PARAMETERS = {
    "get_weather": {
        "type": "object",
        "properties": {
            "city": {"type": "string"},
            "location": {"type": "string"},
            "unit": {"type": "string"},
            "days": {"type": "integer"},
            "hourly": {"type": "boolean"},
        },
    },
    "get_time": {
        "type": "object",
        "properties": {
            "city": {"type": "string"},
            "days": {"type": "integer"},
            "timezone": {"type": "string"},
        },
    },
}


def tool_names():
    """The tools to declare: SSE_REPLAY_TOOLS (a JSON array of names, set by `sse-replay test`) and
    the bundled recordings' get_weather and get_time."""
    names = json.loads(os.environ.get("SSE_REPLAY_TOOLS") or "[]")
    return list(dict.fromkeys([*PARAMETERS, *names]))


def parameters(name):
    """A tool's loose JSON schema: the one above, else an object with any properties."""
    return PARAMETERS.get(name, {"type": "object", "properties": {}})


def chat_tools():
    """Tools in the Chat Completions shape."""
    return [
        {"type": "function", "function": {"name": n, "description": n, "parameters": parameters(n)}}
        for n in tool_names()
    ]


def responses_tools():
    """Tools in the Responses shape."""
    return [
        {"type": "function", "name": n, "description": n, "parameters": parameters(n)}
        for n in tool_names()
    ]


def anthropic_tools():
    """Tools in the Anthropic Messages shape."""
    return [{"name": n, "description": n, "input_schema": parameters(n)} for n in tool_names()]


def bedrock_tools():
    """Tools in the Bedrock Converse shape (toolConfig.tools)."""
    return [
        {"toolSpec": {"name": n, "description": n, "inputSchema": {"json": parameters(n)}}}
        for n in tool_names()
    ]


def openai_base_url():
    """OPENAI_BASE_URL (with /v1), else SSE_REPLAY_URL + v1."""
    url = os.environ.get("OPENAI_BASE_URL")
    if not url and os.environ.get("SSE_REPLAY_URL"):
        url = os.environ["SSE_REPLAY_URL"].rstrip("/") + "/v1"
    return url


def emit(calls):
    """Print the client contract's JSON: an array of {"name", "arguments", "id"}."""
    json.dump(calls, sys.stdout, ensure_ascii=False)
    sys.stdout.write("\n")
