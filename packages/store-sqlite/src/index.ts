// @colloquy/store-sqlite: the embedded default Colloquy Store on SQLite (better-sqlite3, WAL).

// --- opening a store ---
export type { BackgroundCheckpointOptions } from './background-checkpoint.js';
export type { DiskSpaceOptions } from './disk-space.js';
export type { GroupCommitOptions, GroupCommitSettings } from './group-commit.js';
// --- schema ---
export { SQLITE_SCHEMA_VERSION } from './migrations.js';
export { openSqliteStore, type SqliteStoreOptions } from './open-sqlite-store.js';
export type { CheckpointResult, IntegrityReport, SqliteSynchronous } from './sqlite-engine.js';
export type { SqliteStore } from './sqlite-store.js';
