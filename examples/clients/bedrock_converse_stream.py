"""boto3, Bedrock Runtime `converse_stream`: the tool calls assembled from the stream's events as
AWS's Converse guide shows them ("Use a tool with ConverseStream"): one toolUse block per
`contentBlockIndex`, its `toolUseId` and `name` from `contentBlockStart`, its `input` string
fragments appended from `contentBlockDelta`, parsed once at `contentBlockStop` (an empty input is
{}). Text and reasoning blocks, and tools the provider runs itself (`type: server_tool_use`), are
not calls for the client.

boto3 reads AWS_ENDPOINT_URL_BEDROCK_RUNTIME, AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY and
AWS_REGION, which `sse-replay test` sets; it signs the request with SigV4 and checks every frame's
prelude and message CRC32, so a pass proves the binary event stream on the wire."""

import json

import boto3
from botocore.config import Config

from tools import PROMPT, bedrock_tools, emit

client = boto3.client("bedrock-runtime", config=Config(retries={"max_attempts": 1, "mode": "standard"}))
response = client.converse_stream(
    modelId="anthropic.claude-stub-v1:0",
    messages=[{"role": "user", "content": [{"text": PROMPT}]}],
    toolConfig={"tools": bedrock_tools()},
)

blocks = {}  # contentBlockIndex -> {"id", "name", "input", "done"}
for event in response["stream"]:
    if "contentBlockStart" in event:
        start = event["contentBlockStart"]
        tool = start.get("start", {}).get("toolUse")
        if tool is not None and tool.get("type", "tool_use") == "tool_use":
            blocks[start["contentBlockIndex"]] = {
                "id": tool["toolUseId"],
                "name": tool["name"],
                "input": "",
                "done": False,
            }
    elif "contentBlockDelta" in event:
        delta = event["contentBlockDelta"]
        tool = delta["delta"].get("toolUse")
        block = blocks.get(delta["contentBlockIndex"])
        if tool is not None and block is not None:
            block["input"] += tool.get("input", "")
    elif "contentBlockStop" in event:
        block = blocks.get(event["contentBlockStop"]["contentBlockIndex"])
        if block is not None:
            block["done"] = True

emit(
    [
        {"name": b["name"], "arguments": json.loads(b["input"] or "{}"), "id": b["id"]}
        for b in blocks.values()
        if b["done"]
    ]
)
