"""OpenAI Agents SDK, `Runner.run_streamed()` with a model on an AsyncOpenAI client pointed at the
base URL (the SDK docs' "custom model provider" setup); prints the function calls of the stream's raw
response events (`response.output_item.done` with a `function_call` item; the Chat Completions
model turns the chat chunks into these Responses events itself).
Usage: python openai_agents_stream.py openai-chat | openai-responses

No second request: `tool_use_behavior="stop_on_first_tool"` ends the run with the first tool's
output, and the tools are stubs that only return a string. Tracing is disabled (it would upload
traces to OpenAI's servers)."""

import asyncio
import sys

from agents import (
    Agent,
    FunctionTool,
    OpenAIChatCompletionsModel,
    OpenAIResponsesModel,
    Runner,
    set_tracing_disabled,
)
from openai import AsyncOpenAI

from tools import MODEL, PROMPT, emit, openai_base_url, parameters, tool_names

set_tracing_disabled(True)


async def not_run(_ctx, _arguments):
    return "not run"


async def main(mode):
    client = AsyncOpenAI(base_url=openai_base_url(), api_key="sk-dummy", max_retries=0)
    if mode == "openai-chat":
        model = OpenAIChatCompletionsModel(model=MODEL, openai_client=client)
    elif mode == "openai-responses":
        model = OpenAIResponsesModel(model=MODEL, openai_client=client)
    else:
        sys.exit(f"unknown mode {mode} (expected openai-chat or openai-responses)")
    tools = [
        FunctionTool(
            name=name,
            description=name,
            params_json_schema=parameters(name),
            on_invoke_tool=not_run,
            strict_json_schema=False,
        )
        for name in tool_names()
    ]
    agent = Agent(name="Assistant", model=model, tools=tools, tool_use_behavior="stop_on_first_tool")
    result = Runner.run_streamed(agent, PROMPT)
    calls = []
    async for event in result.stream_events():
        if event.type == "raw_response_event" and event.data.type == "response.output_item.done":
            item = event.data.item
            if item.type == "function_call":
                calls.append({"name": item.name, "arguments": item.arguments, "id": item.call_id})
    emit(calls)


asyncio.run(main(sys.argv[1] if len(sys.argv) > 1 else "openai-chat"))
