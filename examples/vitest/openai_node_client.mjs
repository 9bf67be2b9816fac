// The code under test in the vitest example: openai-node's streaming helper
// (`client.chat.completions.stream()`, then `finalChatCompletion()`), and the tool calls it
// assembled in the client contract's shape.
//
// Also a client for `sse-replay test` (`node openai_node_client.mjs`: it reads OPENAI_BASE_URL and
// SSE_REPLAY_TOOLS, which the harness sets, and prints the calls), so the CI script can check that
// vitest's verdicts equal `sse-replay test`'s on the same cases.
import OpenAI from 'openai';
import { pathToFileURL } from 'node:url';

export async function toolCalls(baseURL, tools) {
  const client = new OpenAI({ baseURL, apiKey: 'sk-sse-replay-dummy', maxRetries: 0 });
  const stream = client.chat.completions.stream({
    model: 'gpt-stub',
    messages: [{ role: 'user', content: 'What is the weather in Shenzhen?' }],
    tools: tools.map((name) => ({ type: 'function', function: { name, parameters: { type: 'object' } } })),
  });
  const completion = await stream.finalChatCompletion();
  return (completion.choices[0]?.message?.tool_calls ?? []).map((tc) => ({
    name: tc.function.name,
    arguments: tc.function.arguments,
    id: tc.id,
  }));
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const calls = await toolCalls(process.env.OPENAI_BASE_URL, JSON.parse(process.env.SSE_REPLAY_TOOLS ?? '[]'));
  console.log(JSON.stringify(calls));
}
