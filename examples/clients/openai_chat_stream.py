"""openai-python, Chat Completions with stream=True, accumulating the deltas the way OpenAI's
function-calling guide shows ("Streaming" section): a dict keyed by tool-call index, the first
delta of an index stored as is, then `function.arguments +=` every delta's arguments (the first
delta's included: harmless when it is OpenAI's opening `"arguments": ""`)."""

from openai import OpenAI

from tools import MODEL, PROMPT, chat_tools, emit, openai_base_url

client = OpenAI(base_url=openai_base_url(), api_key="sk-dummy", max_retries=0)
stream = client.chat.completions.create(
    model=MODEL,
    messages=[{"role": "user", "content": PROMPT}],
    tools=chat_tools(),
    stream=True,
)

final_tool_calls = {}
for chunk in stream:
    if not chunk.choices:  # a usage-only chunk (not in the guide's snippet, which would IndexError)
        continue
    for tool_call in chunk.choices[0].delta.tool_calls or []:
        index = tool_call.index
        if index not in final_tool_calls:
            final_tool_calls[index] = tool_call
        final_tool_calls[index].function.arguments += tool_call.function.arguments

emit(
    [
        {"name": tc.function.name, "arguments": tc.function.arguments, "id": tc.id}
        for tc in final_tool_calls.values()
    ]
)
