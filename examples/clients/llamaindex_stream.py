"""LlamaIndex, `llm.stream_chat_with_tools(tools, user_msg=...)` on `llama_index.llms.openai.OpenAI`
(or `OpenAIResponses`) with `api_base`, then `llm.get_tool_calls_from_response(last_response)`, as
LlamaIndex's function-calling docs show; prints those ToolSelections.
Usage: .venv-openai2/bin/python llamaindex_stream.py openai-chat | openai-responses

The model is named "gpt-4o-mini": LlamaIndex looks the name up for its context window and raises on
one it does not know (the stub server ignores it). Tools are plain functions whose arguments are all
optional, as `FunctionTool.from_defaults` turns them into schemas."""

import sys

from llama_index.core.tools import FunctionTool
from llama_index.llms.openai import OpenAI, OpenAIResponses

from tools import PROMPT, emit, openai_base_url, tool_names


def get_weather(
    city: str = None, location: str = None, unit: str = None, days: int = None, hourly: bool = None
) -> str:
    """get_weather"""
    return "not run"


def get_time(city: str = None, days: int = None, timezone: str = None) -> str:
    """get_time"""
    return "not run"


def other_tool(**kwargs) -> str:
    return "not run"


known = {"get_weather": get_weather, "get_time": get_time}
tools = [
    FunctionTool.from_defaults(fn=known.get(name, other_tool), name=name, description=name)
    for name in tool_names()
]

mode = sys.argv[1] if len(sys.argv) > 1 else "openai-chat"
llm_class = {"openai-chat": OpenAI, "openai-responses": OpenAIResponses}.get(mode)
if llm_class is None:
    sys.exit(f"unknown mode {mode} (expected openai-chat or openai-responses)")
llm = llm_class(model="gpt-4o-mini", api_base=openai_base_url(), api_key="sk-dummy", max_retries=0)

response = None
for response in llm.stream_chat_with_tools(tools, user_msg=PROMPT):
    pass
tool_calls = llm.get_tool_calls_from_response(response, error_on_no_tool_call=False) if response else []

emit([{"name": tc.tool_name, "arguments": tc.tool_kwargs, "id": tc.tool_id} for tc in tool_calls])
