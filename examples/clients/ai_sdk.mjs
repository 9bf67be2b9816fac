// The Vercel AI SDK: `streamText` with a provider model, then the result's tool calls.
// Usage: node ai_sdk.mjs openai-chat | openai-responses | anthropic
// Tools have no `execute`, so the calls are returned, not run. Calls the SDK marks `invalid`
// (arguments that do not parse or do not fit the schema) are left out, as the SDK never runs them;
// a stream error (an `error` part) is printed on stderr and the script exits 1.
import { createAnthropic } from '@ai-sdk/anthropic';
import { createOpenAI } from '@ai-sdk/openai';
import { jsonSchema, streamText, tool } from 'ai';
import { MODEL, PROMPT, emit, openaiBaseURL, parameters, toolNames } from './tools.mjs';

const mode = process.argv[2] ?? 'openai-chat';
let model;
if (mode === 'openai-chat' || mode === 'openai-responses') {
  const openai = createOpenAI({ baseURL: openaiBaseURL(), apiKey: 'sk-dummy' });
  model = mode === 'openai-chat' ? openai.chat(MODEL) : openai.responses(MODEL);
} else if (mode === 'anthropic') {
  const base = process.env.ANTHROPIC_BASE_URL ?? process.env.SSE_REPLAY_URL;
  const anthropic = createAnthropic({
    baseURL: base ? base.replace(/\/$/, '') + '/v1' : undefined,
    apiKey: 'sk-ant-dummy',
  });
  model = anthropic('claude-stub');
} else {
  console.error(`unknown mode ${mode} (expected openai-chat, openai-responses or anthropic)`);
  process.exit(2);
}

// Every tool the recording calls (SSE_REPLAY_TOOLS), not only the two built in: the AI SDK marks a
// call to an undeclared tool invalid, and the example would then drop it.
const tools = Object.fromEntries(
  toolNames().map((name) => [
    name,
    tool({ description: name, inputSchema: jsonSchema(parameters(name)) }),
  ]),
);
const result = streamText({ model, tools, prompt: PROMPT, maxRetries: 0, maxOutputTokens: 1024 });
let failed = false;
for await (const part of result.fullStream) {
  if (part.type === 'error') {
    console.error('stream error:', part.error?.message ?? String(part.error));
    failed = true;
  }
}
if (failed) process.exit(1);
const calls = await result.toolCalls;
emit(
  calls
    .filter((c) => !c.invalid)
    .map((c) => ({ name: c.toolName, arguments: c.input, id: c.toolCallId })),
);
