// AWS SDK for JavaScript v3, `@aws-sdk/client-bedrock-runtime` `ConverseStreamCommand`: the tool
// calls assembled from the stream's events as AWS's Converse guide shows them: one toolUse block
// per `contentBlockIndex`, its `toolUseId` and `name` from `contentBlockStart`, its `input`
// string fragments appended from `contentBlockDelta`, parsed once at `contentBlockStop` ("" is {}).
// The SDK reads AWS_ENDPOINT_URL_BEDROCK_RUNTIME, AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY and
// AWS_REGION, which `sse-replay test` sets; it signs with SigV4 and checks every frame's CRCs.
import { BedrockRuntimeClient, ConverseStreamCommand } from '@aws-sdk/client-bedrock-runtime';

import { PROMPT, emit, parameters, toolNames } from './tools.mjs';

const client = new BedrockRuntimeClient({ maxAttempts: 1 });
const response = await client.send(
  new ConverseStreamCommand({
    modelId: 'anthropic.claude-stub-v1:0',
    messages: [{ role: 'user', content: [{ text: PROMPT }] }],
    toolConfig: {
      tools: toolNames().map((name) => ({
        toolSpec: { name, description: name, inputSchema: { json: parameters(name) } },
      })),
    },
  }),
);

const blocks = new Map(); // contentBlockIndex -> { id, name, input, done }
for await (const event of response.stream) {
  if (event.contentBlockStart) {
    const { contentBlockIndex, start } = event.contentBlockStart;
    const tool = start?.toolUse;
    if (tool && (tool.type ?? 'tool_use') === 'tool_use') {
      blocks.set(contentBlockIndex, { id: tool.toolUseId, name: tool.name, input: '', done: false });
    }
  } else if (event.contentBlockDelta) {
    const { contentBlockIndex, delta } = event.contentBlockDelta;
    const block = blocks.get(contentBlockIndex);
    if (delta?.toolUse && block) block.input += delta.toolUse.input ?? '';
  } else if (event.contentBlockStop) {
    const block = blocks.get(event.contentBlockStop.contentBlockIndex);
    if (block) block.done = true;
  }
}

emit(
  [...blocks.values()]
    .filter((b) => b.done)
    .map((b) => ({ name: b.name, arguments: JSON.parse(b.input || '{}'), id: b.id })),
);
