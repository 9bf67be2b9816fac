import { defineConfig } from 'vitest/config';

// The helper's sessions (scripts/ci-helpers.sh runs it: `vitest run --root sessions`): the tests in
// the order written, in one worker.
export default defineConfig({
  test: {
    include: ['*.test.mjs'],
    fileParallelism: false,
    sequence: { concurrent: false },
    testTimeout: 30_000,
  },
});
