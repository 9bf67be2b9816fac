"""openai-python, the `client.responses.stream()` helper: the final response's function calls."""

from openai import OpenAI

from tools import MODEL, PROMPT, emit, openai_base_url, responses_tools

client = OpenAI(base_url=openai_base_url(), api_key="sk-dummy", max_retries=0)
with client.responses.stream(model=MODEL, input=PROMPT, tools=responses_tools()) as stream:
    for _event in stream:
        pass
    response = stream.get_final_response()

emit(
    [
        {"name": item.name, "arguments": item.arguments, "id": item.call_id}
        for item in response.output
        if item.type == "function_call"
    ]
)
