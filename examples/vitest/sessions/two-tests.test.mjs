// Two tests over one suite server, each in its own session: one reads the streams with openai-node,
// the other reads them and always gives up (right on a broken stream only). The second takes only
// the fault and broken cases, so a store of verdicts shared with the first would gate them by the
// first one's clean passes; in its own session it passes nothing. The last test checks both.
import { afterAll, expect, test } from 'vitest';
import { startSuite } from 'sse-replay-suite';
import { toolCalls } from '../openai_node_client.mjs';

const suite = await startSuite({ dialect: 'openai-chat', name: 'reads' });
const quitter = await suite.session('gives up');
afterAll(() => suite.close());

const verdicts = { reads: [], givesUp: [] };

test.for(suite.cases.map((c) => [c.id, c]))('reads %s', async ([, c]) => {
  let calls;
  try {
    calls = await toolCalls(c.openaiBaseURL, c.tools);
  } catch (error) {
    verdicts.reads.push(await c.verdict([], { error }));
    return;
  }
  verdicts.reads.push(await c.verdict(calls)); // judged in the last test
});

const faultsAndBroken = quitter.cases.filter((c) => c.kind !== 'clean');
test.for(faultsAndBroken.map((c) => [c.id, c]))('gives up %s', async ([, c]) => {
  await toolCalls(c.openaiBaseURL, c.tools).catch(() => {});
  verdicts.givesUp.push(await c.verdict([], { error: 'gave up' }));
});

test('the test that gives up is not credited with the other one\'s passes', () => {
  const passed = (vs) => vs.filter((v) => v.verdict === 'pass').map((v) => v.case);
  // The reading test passes faults on the clean forms it passed itself...
  expect(passed(verdicts.reads).filter((c) => c.endsWith('/cut'))).not.toEqual([]);
  // ...which count for nothing in the other session.
  expect(verdicts.givesUp.length).toBe(faultsAndBroken.length);
  expect(passed(verdicts.givesUp)).toEqual([]);
});
