import { defineConfig } from 'vitest/config';

// One case after another, in the listing's order (clean forms first), in one worker.
export default defineConfig({
  test: {
    include: ['*.test.mjs'],
    fileParallelism: false,
    sequence: { concurrent: false },
    testTimeout: 30_000,
  },
});
