import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Each file starts its own throwaway PostgreSQL server; one at a time is plenty on two cores.
    fileParallelism: false,
  },
});
