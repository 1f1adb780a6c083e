// @colloquy/store-postgres: the Colloquy Store on PostgreSQL (node-postgres).

// --- connection checks and URLs ---
export { type ConnectionCheck, type ConnectionProblem, checkPostgresConnection } from './check-connection.js';
export { type DatabaseAddress, databaseAddress, redactDatabaseUrl } from './database-url.js';
// --- schema ---
export { POSTGRES_SCHEMA_VERSION } from './migrations.js';
// --- opening a store ---
export { openPostgresStore, PostgresStore, type PostgresStoreOptions } from './postgres-store.js';
