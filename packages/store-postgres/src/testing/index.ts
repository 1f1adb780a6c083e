// @colloquy/store-postgres/testing: a throwaway PostgreSQL server for tests of stores and apps.
export {
  createTestDatabase,
  startTestPostgres,
  type TestPostgres,
  terminateTestConnections,
} from './test-postgres.js';
