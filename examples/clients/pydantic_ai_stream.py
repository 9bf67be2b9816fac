"""pydantic-ai, `agent.iter()` with the model request node streamed (`node.stream(run.ctx)`), as
pydantic-ai's "Streaming All Events and Output" docs show; the run stops at the CallToolsNode, before
any tool runs or a second request is sent, and prints that node's ToolCallParts.
Usage: python pydantic_ai_stream.py openai-chat | openai-responses | anthropic

Tools come from `Tool.from_schema` (loose schemas: no argument validation). A call whose arguments
are not a JSON object is left out (pydantic-ai would not run it: it sends the model a retry prompt);
`args_as_dict(raise_if_invalid=True)` is the SDK's own parse."""

import asyncio
import os
import sys

from pydantic_ai import Agent, Tool
from pydantic_ai.messages import ToolCallPart

from tools import MODEL, PROMPT, emit, openai_base_url, parameters, tool_names


def make_model(mode):
    if mode in ("openai-chat", "openai-responses"):
        from pydantic_ai.models.openai import OpenAIChatModel, OpenAIResponsesModel
        from pydantic_ai.providers.openai import OpenAIProvider

        provider = OpenAIProvider(base_url=openai_base_url(), api_key="sk-dummy")
        model_class = OpenAIChatModel if mode == "openai-chat" else OpenAIResponsesModel
        return model_class(MODEL, provider=provider)
    if mode == "anthropic":
        from pydantic_ai.models.anthropic import AnthropicModel
        from pydantic_ai.providers.anthropic import AnthropicProvider

        base = os.environ.get("ANTHROPIC_BASE_URL") or os.environ.get("SSE_REPLAY_URL")
        return AnthropicModel("claude-stub", provider=AnthropicProvider(base_url=base, api_key="sk-ant-dummy"))
    sys.exit(f"unknown mode {mode} (expected openai-chat, openai-responses or anthropic)")


def never_run(**kwargs):
    raise RuntimeError("tools are not run here")


async def main(mode):
    tools = [Tool.from_schema(never_run, name, name, parameters(name)) for name in tool_names()]
    agent = Agent(make_model(mode), tools=tools)
    calls = []
    async with agent.iter(PROMPT) as run:
        async for node in run:
            if Agent.is_model_request_node(node):
                async with node.stream(run.ctx) as request_stream:
                    async for _event in request_stream:
                        pass
            elif Agent.is_call_tools_node(node):
                for part in node.model_response.parts:
                    if isinstance(part, ToolCallPart):
                        try:
                            args = part.args_as_dict(raise_if_invalid=True)
                        except (ValueError, AssertionError) as e:
                            print(f"left out {part.tool_name} {part.tool_call_id}: {e}", file=sys.stderr)
                            continue
                        calls.append({"name": part.tool_name, "arguments": args, "id": part.tool_call_id})
                break
    emit(calls)


asyncio.run(main(sys.argv[1] if len(sys.argv) > 1 else "openai-chat"))
