// openai-node against every OpenAI Chat case of sse-replay's suite, in vitest.
//
//   npm ci && SSE_REPLAY_BIN=../../target/debug/sse-replay npx vitest run
//
// Clean recordings pass; quirk-all-at-index-0 fails with a named diagnosis ("behaves like
// `concat-all`": the helper keys calls by index, and this provider puts every call at index 0).
import { afterAll, test } from 'vitest';
import { startSuite } from 'sse-replay-suite';
import { toolCalls } from './openai_node_client.mjs';

const suite = await startSuite({ dialect: 'openai-chat' });
afterAll(() => suite.close());

test.for(suite.cases.map((c) => [c.id, c]))('%s', async ([, c], context) => {
  let calls;
  try {
    calls = await toolCalls(c.openaiBaseURL, c.tools);
  } catch (error) {
    // The SDK gave up: the right answer to a stream that breaks.
    await c.check([], { error, context });
    return;
  }
  await c.check(calls, { context });
});
