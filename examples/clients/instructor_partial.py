"""instructor, partial streaming: `client.chat.completions.create_partial(response_model=M, ...)` on
`instructor.from_openai(OpenAI(base_url=...))` (Mode.TOOLS), as instructor's "Streaming Partial
Responses" docs show; the last partial object is printed as ONE call named after the response model.
Usage: .venv-openai2/bin/python instructor_partial.py openai-chat | openai-responses
(Mode.TOOLS on Chat Completions, Mode.RESPONSES_TOOLS on the Responses API)

What it can express: one structured object, sent as one forced tool call whose name is the model's
(here get_weather, the first call of every bundled recording, or else the first name in
SSE_REPLAY_TOOLS; every field optional; the arguments are the non-null fields,
`model_dump(exclude_none=True)`, as a partial object has every field set). What it cannot: a second
call (the PARALLEL_TOOLS mode, `Iterable[Union[...]]`, refuses stream=True), a call id, the name the
stream actually sent, or any field the model does not declare. A recording with two calls therefore
fails by construction (one call printed); the cases worth reading are where the first call's
arguments come out wrong. instructor validates the final object; a ValidationError exits 1."""

import json
import os
import sys
from typing import Optional

import instructor
from openai import OpenAI
from pydantic import create_model

from tools import MODEL, PARAMETERS, PROMPT, emit, openai_base_url

PY_TYPES = {"string": str, "integer": int, "boolean": bool}

declared = json.loads(os.environ.get("SSE_REPLAY_TOOLS") or "[]")
name = "get_weather" if not declared or "get_weather" in declared else declared[0]
properties = PARAMETERS.get(name, {}).get("properties", {})
ResponseModel = create_model(
    name, **{field: (Optional[PY_TYPES[s["type"]]], None) for field, s in properties.items()}
)

modes = {"openai-chat": instructor.Mode.TOOLS, "openai-responses": instructor.Mode.RESPONSES_TOOLS}
mode = sys.argv[1] if len(sys.argv) > 1 else "openai-chat"
if mode not in modes:
    sys.exit(f"unknown mode {mode} (expected openai-chat or openai-responses)")
openai_client = OpenAI(base_url=openai_base_url(), api_key="sk-dummy", max_retries=0)
client = instructor.from_openai(openai_client, mode=modes[mode])
last = None
for partial in client.chat.completions.create_partial(
    model=MODEL,
    response_model=ResponseModel,
    messages=[{"role": "user", "content": PROMPT}],
    max_retries=0,
):
    last = partial

emit([] if last is None else [{"name": name, "arguments": last.model_dump(exclude_none=True)}])
