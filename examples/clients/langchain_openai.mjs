// LangChain.js, `ChatOpenAI` from @langchain/openai: `.bindTools(tools).stream(prompt)`, the
// AIMessageChunks concatenated (`full = full.concat(chunk)`, as LangChain's streaming docs show),
// then the aggregated message's `tool_calls` (LangChain's parsed calls; `invalid_tool_calls`, the
// ones it could not parse, are left out).
// Usage: node_modules/.bin/node langchain_openai.mjs openai-chat | openai-responses
// (openai-responses: `useResponsesApi: true`)
import { ChatOpenAI } from '@langchain/openai';
import { MODEL, PROMPT, emit, openaiBaseURL, parameters, toolNames } from './tools.mjs';

const mode = process.argv[2] ?? 'openai-chat';
if (mode !== 'openai-chat' && mode !== 'openai-responses') {
  console.error(`unknown mode ${mode} (expected openai-chat or openai-responses)`);
  process.exit(2);
}
const llm = new ChatOpenAI({
  model: MODEL,
  apiKey: 'sk-dummy',
  configuration: { baseURL: openaiBaseURL() },
  maxRetries: 0,
  useResponsesApi: mode === 'openai-responses',
});
const llmWithTools = llm.bindTools(
  toolNames().map((name) => ({
    type: 'function',
    function: { name, description: name, parameters: parameters(name) },
  })),
);

let full;
for await (const chunk of await llmWithTools.stream(PROMPT)) {
  full = full === undefined ? chunk : full.concat(chunk);
}
emit((full?.tool_calls ?? []).map((tc) => ({ name: tc.name, arguments: tc.args, id: tc.id })));
