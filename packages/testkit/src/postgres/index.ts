// @colloquy/testkit/postgres: a throwaway PostgreSQL server for tests of stores and apps (needs the
// PostgreSQL server binaries, and `pg`), and a relay that counts the round trips made to it.

export { type RoundTripCounter, startRoundTripCounter } from './round-trip-counter.js';
export {
  createTestDatabase,
  startTestPostgres,
  type TestPostgres,
  terminateTestConnections,
} from './test-postgres.js';
