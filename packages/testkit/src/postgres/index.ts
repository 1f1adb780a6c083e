// @colloquy/testkit/postgres: a throwaway PostgreSQL server for tests of stores and apps (needs the
// PostgreSQL server binaries, and `pg`).

export {
  createTestDatabase,
  startTestPostgres,
  type TestPostgres,
  terminateTestConnections,
} from './test-postgres.js';
