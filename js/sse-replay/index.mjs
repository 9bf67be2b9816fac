// sse-replay's client-test suite inside vitest or jest.
//
// Every case of `sse-replay test` (a recording x a way of cutting its bytes into network reads)
// becomes one test: point the code under test at `c.baseURL` (`c.openaiBaseURL` for the OpenAI
// SDKs) and hand the tool calls it assembled to `c.check(calls)`, which asks the suite server for
// the verdict `sse-replay test` would give and throws with the diagnosis when the case fails.
//
//   import { afterAll, test } from 'vitest';
//   import { startSuite } from 'sse-replay-suite';
//
//   const suite = await startSuite({ dialect: 'openai-chat' });
//   afterAll(() => suite.close());
//   test.for(suite.cases.map((c) => [c.id, c]))('%s', async ([, c], ctx) => {
//     let calls;
//     try { calls = await myAgent.toolCalls(c.openaiBaseURL); }
//     catch (error) { return c.check([], { error, context: ctx }); }   // the SDK gave up
//     await c.check(calls, { context: ctx });
//   });
//
// The suite server is started here (`bin`, `$SSE_REPLAY_BIN` or `sse-replay` on PATH, with `args` or
// `$SSE_REPLAY_SUITE_ARGS`), or an existing one is used (`url` or `$SSE_REPLAY_SUITE_URL`). A case
// that is not judged (a pass on a fault or broken stream while the client fails the same
// recording's clean form) is skipped with `context.skip()` when a test context is given.
// Node 18+ (global fetch), no dependencies.

import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';

/** The verdict failed: the case's difference and diagnosis are in the message. */
export class SuiteCaseFailure extends Error {
  constructor(verdict) {
    let message = `${verdict.case}: ${verdict.verdict}: ${verdict.detail}`;
    if (verdict.diagnosis) message += `\n    ${verdict.diagnosis}`;
    super(message);
    this.name = 'SuiteCaseFailure';
    this.verdict = verdict;
  }
}

/** One case of the suite. */
export class SuiteCase {
  constructor(listing) {
    this.listing = listing;
    this.id = listing.id;
    this.recording = listing.recording;
    this.variant = listing.variant;
    this.dialect = listing.dialect;
    this.kind = listing.kind;
    this.baseURL = listing.base_url;
    this.tools = listing.tools;
    /** Each expected call: {name, arguments, id, status: 'ok' | 'unfinished' | 'broken'}. */
    this.expected = listing.expected;
  }

  /** `baseURL` with `/v1`, as the OpenAI SDKs want it. */
  get openaiBaseURL() {
    return `${this.baseURL}/v1`;
  }

  /** The verdict on what the client did: the calls it assembled, and the error it failed with. */
  async verdict(calls, { error } = {}) {
    const body = { calls: calls ?? [] };
    if (error !== undefined && error !== null) {
      body.error = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
    }
    const r = await fetch(this.listing.verdict_url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    if (!r.ok) throw new Error(`sse-replay: the verdict request failed: ${r.status} ${await r.text()}`);
    return r.json();
  }

  /**
   * Asserts the case passes: throws a SuiteCaseFailure (difference and diagnosis) when it fails;
   * skips the test through `context.skip()` when it is not judged (or returns the verdict).
   */
  async check(calls, { error, context } = {}) {
    const v = await this.verdict(calls, { error });
    if (v.verdict === 'pass') return v;
    if (v.verdict === 'not-judged') {
      if (context && typeof context.skip === 'function') context.skip(`not judged: ${v.detail}`);
      return v;
    }
    throw new SuiteCaseFailure(v);
  }
}

/**
 * Starts `sse-replay serve --suite` (or uses `url`) and lists its cases.
 * Options: `url`, `bin`, `args` (array of extra `serve --suite` flags), `dialect` (only its cases).
 * Returns `{ url, cases, close }`.
 */
export async function startSuite(options = {}) {
  let url = options.url ?? process.env.SSE_REPLAY_SUITE_URL;
  let child = null;
  if (!url) {
    const bin = options.bin ?? process.env.SSE_REPLAY_BIN ?? 'sse-replay';
    const extra =
      options.args ?? (process.env.SSE_REPLAY_SUITE_ARGS ?? '').split(/\s+/).filter(Boolean);
    child = spawn(bin, ['serve', '--suite', '--addr', '127.0.0.1:0', ...extra], {
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    // The server's first line says where it listens: wait for that line, not a timer.
    url = await new Promise((resolve, reject) => {
      const lines = createInterface({ input: child.stdout });
      child.once('error', (e) => reject(new Error(`sse-replay: cannot start ${bin}: ${e.message}`)));
      child.once('exit', (code) =>
        reject(new Error(`sse-replay: \`${bin} serve --suite\` exited with code ${code}`)),
      );
      lines.once('line', (line) => {
        if (line.startsWith('listening on ')) resolve(line.slice('listening on '.length));
        else reject(new Error(`sse-replay: unexpected first line: ${line}`));
      });
    });
  }
  url = url.replace(/\/+$/, '');
  const query = options.dialect ? `?dialect=${encodeURIComponent(options.dialect)}` : '';
  const r = await fetch(`${url}/cases${query}`);
  if (!r.ok) throw new Error(`sse-replay: GET ${url}/cases: ${r.status}`);
  const listing = await r.json();
  return {
    url,
    cases: listing.cases.map((c) => new SuiteCase(c)),
    async close() {
      if (child && child.exitCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGTERM');
        await exited;
      }
    },
  };
}
