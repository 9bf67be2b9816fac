"""openai-python, the `client.responses.stream()` helper: the final response's function calls."""

from openai import OpenAI

from tools import MODEL, PROMPT, emit, openai_base_url, responses_tools

client = OpenAI(base_url=openai_base_url(), api_key="sk-dummy", max_retries=0)
with client.responses.stream(model=MODEL, input=PROMPT, tools=responses_tools()) as stream:
    for _event in stream:
        pass
    response = stream.get_final_response()



def call(item):
    """A client call of the final response, in the contract's JSON; None for anything else (text,
    reasoning, server tools). A custom tool's input is its text; apply_patch's arguments are its
    operation object."""
    if item.type == "function_call":
        return {"name": item.name, "arguments": item.arguments, "id": item.call_id}
    if item.type == "custom_tool_call":
        return {"name": item.name, "arguments": item.input, "id": item.call_id}
    if item.type == "apply_patch_call":
        operation = item.operation
        if hasattr(operation, "to_dict"):
            operation = operation.to_dict()
        return {"name": "apply_patch", "arguments": operation, "id": item.call_id}
    return None


emit([c for c in map(call, response.output) if c is not None])
