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
//
// Verdicts are kept per session on the server: a fault or broken case counts only on the clean
// form passed in the same session. `suite.cases` are the session `startSuite` opened; a second
// test over the same server takes its own: `const { cases } = await suite.session('name')`. So one
// test never changes another's results, and two runs on one server never mix. The package's
// version must be the server's: any other sse-replay is refused with both versions in the message.
// Node 18+ (global fetch), no dependencies.

import { execFile, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';

/** This package's version: released with sse-replay, whose version it must be. */
export const version = JSON.parse(readFileSync(new URL('./package.json', import.meta.url), 'utf8')).version;

function mismatch(what, theirs) {
  if (!theirs) {
    return new Error(
      `sse-replay-suite ${version} needs sse-replay ${version}, but ${what} does not say which ` +
        'sse-replay version it is',
    );
  }
  return new Error(
    `sse-replay-suite ${version} needs sse-replay ${version}, but ${what} is sse-replay ${theirs}: ` +
      `install the package of that version (npm install --save-dev sse-replay-suite@${theirs}) ` +
      `or point \`bin\` / $SSE_REPLAY_BIN at sse-replay ${version}`,
  );
}

/** The version `bin --version` prints (`sse-replay X.Y.Z`). */
function binaryVersion(bin) {
  return new Promise((resolve, reject) => {
    execFile(bin, ['--version'], { timeout: 60_000 }, (error, stdout) => {
      if (error && error.code === 'ENOENT') {
        reject(new Error(`sse-replay: cannot start ${bin}: ${error.message}`));
        return;
      }
      const words = String(stdout ?? '').trim().split(/\s+/);
      resolve(words.length === 2 && words[0] === 'sse-replay' ? words[1] : null);
    });
  });
}

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
 * Opens a session on the suite server at `url` (verdicts of its own) and lists its cases (only
 * `dialect`'s when given). Refuses a server of another version. Returns `{ id, url, cases, close }`.
 */
export async function openSession(url, { name, dialect, what } = {}) {
  const r = await fetch(`${url}/sessions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(name ? { name } : {}),
  });
  const server = what ?? `the server at ${url}`;
  if (r.status === 404) {
    throw new Error(
      `sse-replay-suite ${version}: ${server} opens no sessions, it is older than sse-replay ${version}: install sse-replay ${version}`,
    );
  }
  if (!r.ok) throw new Error(`sse-replay: POST ${url}/sessions: ${r.status} ${await r.text()}`);
  const info = await r.json();
  if (info.version !== version) throw mismatch(server, info.version);
  const sessionURL = info.url.replace(/\/+$/, '');
  const query = dialect ? `?dialect=${encodeURIComponent(dialect)}` : '';
  const listing = await fetch(`${sessionURL}/cases${query}`);
  if (!listing.ok) throw new Error(`sse-replay: GET ${sessionURL}/cases: ${listing.status}`);
  return {
    id: info.id,
    url: sessionURL,
    cases: (await listing.json()).cases.map((c) => new SuiteCase(c)),
    async close() {
      await fetch(sessionURL, { method: 'DELETE' }).catch(() => {});
    },
  };
}

/**
 * Starts `sse-replay serve --suite` (or uses `url`), opens a session and lists its cases.
 * Options: `url`, `bin`, `args` (array of extra `serve --suite` flags), `dialect` (only its cases),
 * `name` (the session's, for the server's log).
 * Returns `{ url, cases, session(name), close }`: `session(name)` opens another session (for
 * another test over the same server) with the same dialect, `{ id, url, cases, close }`.
 */
export async function startSuite(options = {}) {
  let url = options.url ?? process.env.SSE_REPLAY_SUITE_URL;
  let child = null;
  let what;
  if (!url) {
    const bin = options.bin ?? process.env.SSE_REPLAY_BIN ?? 'sse-replay';
    what = bin;
    const theirs = await binaryVersion(bin);
    if (theirs !== version) throw mismatch(bin, theirs);
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
  const sessions = [];
  const session = async (name) => {
    const s = await openSession(url, { name, dialect: options.dialect, what });
    sessions.push(s);
    return s;
  };
  let first;
  try {
    first = await session(options.name);
  } catch (e) {
    if (child && child.exitCode === null) child.kill('SIGTERM');
    throw e;
  }
  return {
    url,
    cases: first.cases,
    session,
    async close() {
      // A server started elsewhere outlives us: close our sessions on it.
      if (!child) await Promise.all(sessions.map((s) => s.close()));
      if (child && child.exitCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGTERM');
        await exited;
      }
    },
  };
}
