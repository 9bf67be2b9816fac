"""Anthropic Python SDK's Bedrock client (`AnthropicBedrock`, InvokeModelWithResponseStream):
`client.messages.stream()` and the final message's tool_use blocks. Against the suite's recordings
of Anthropic Messages inside Bedrock `chunk` frames (`sse-replay test --dialect anthropic-messages`
serves it only those: it asks for `/model/{id}/invoke-with-response-stream`); the SDK reads ANTHROPIC_BEDROCK_BASE_URL, AWS_REGION and the AWS
credentials, which `sse-replay test` sets, and checks every frame's CRCs (through botocore)."""

import os

from anthropic import AnthropicBedrock

from tools import PROMPT, anthropic_tools, emit

client = AnthropicBedrock(
    aws_region=os.environ.get("AWS_REGION"),
    base_url=os.environ.get("ANTHROPIC_BEDROCK_BASE_URL"),
    max_retries=0,
)
with client.messages.stream(
    model="anthropic.claude-stub-v1:0",
    max_tokens=1024,
    messages=[{"role": "user", "content": PROMPT}],
    tools=anthropic_tools(),
) as stream:
    for _event in stream:
        pass
    message = stream.get_final_message()

emit([{"name": b.name, "arguments": b.input, "id": b.id} for b in message.content if b.type == "tool_use"])
