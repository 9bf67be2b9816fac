"""openai-python, the `client.chat.completions.stream()` helper: the final completion's tool calls."""

from openai import OpenAI

from tools import MODEL, PROMPT, chat_tools, emit, openai_base_url

client = OpenAI(base_url=openai_base_url(), api_key="sk-dummy", max_retries=0)
with client.chat.completions.stream(
    model=MODEL,
    messages=[{"role": "user", "content": PROMPT}],
    tools=chat_tools(),
) as stream:
    for _event in stream:
        pass
    completion = stream.get_final_completion()

emit(
    [
        {"name": tc.function.name, "arguments": tc.function.arguments, "id": tc.id}
        for tc in completion.choices[0].message.tool_calls or []
    ]
)
