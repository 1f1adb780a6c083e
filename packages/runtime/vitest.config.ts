import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    testTimeout: 20_000,
    // One throwaway PostgreSQL server for the run: the `postgres` store kind of the gateway suites.
    globalSetup: ['test/support/postgres-global-setup.ts'],
  },
});
