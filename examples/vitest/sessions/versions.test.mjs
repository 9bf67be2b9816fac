// The helper refuses an sse-replay of another version, whether it starts the binary or is given a
// server's URL, with both versions in the message.
import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import { startSuite, version } from 'sse-replay-suite';

test('a binary of another version is refused', async () => {
  const fake = join(mkdtempSync(join(tmpdir(), 'sse-replay-')), 'sse-replay');
  writeFileSync(fake, "#!/bin/sh\necho 'sse-replay 9.9.9'\n");
  chmodSync(fake, 0o755);
  await expect(startSuite({ bin: fake })).rejects.toThrow(
    `sse-replay-suite ${version} needs sse-replay ${version}, but ${fake} is sse-replay 9.9.9`,
  );
});

test('a server of another version is refused', async () => {
  const server = createServer((req, res) => {
    res.writeHead(201, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ id: '1', url: `http://${req.headers.host}/sessions/1`, version: '0.0.1' }));
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${server.address().port}`;
  try {
    await expect(startSuite({ url })).rejects.toThrow(
      `sse-replay-suite ${version} needs sse-replay ${version}, but the server at ${url} is sse-replay 0.0.1`,
    );
  } finally {
    server.close();
  }
});
