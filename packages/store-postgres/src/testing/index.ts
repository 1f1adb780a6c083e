// @colloquy/store-postgres/testing: a throwaway PostgreSQL server for tests of stores and apps.
export { createTestDatabase, startTestPostgres, type TestPostgres } from './test-postgres.js';
