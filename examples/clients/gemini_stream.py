"""Google Gen AI Python SDK (`client.models.generate_content_stream`): every chunk's
`function_calls`, as the SDK's function-calling guide reads them. The server is
GOOGLE_GEMINI_BASE_URL (set by `sse-replay test`); the SDK asks for `?alt=sse`."""

import os

from google import genai
from google.genai import types

from tools import PARAMETERS, PROMPT, emit

client = genai.Client(
    api_key=os.environ.get("GEMINI_API_KEY", "dummy"),
    http_options=types.HttpOptions(base_url=os.environ.get("GOOGLE_GEMINI_BASE_URL") or os.environ["SSE_REPLAY_URL"]),
)
tools = [
    types.Tool(
        function_declarations=[
            types.FunctionDeclaration(name=n, description=n, parameters_json_schema=p) for n, p in PARAMETERS.items()
        ]
    )
]
calls = []
for chunk in client.models.generate_content_stream(
    model="gemini-2.5-flash",
    contents=PROMPT,
    config=types.GenerateContentConfig(tools=tools),
):
    for fc in chunk.function_calls or []:
        calls.append({"name": fc.name, "arguments": fc.args or {}, "id": fc.id})
emit(calls)
