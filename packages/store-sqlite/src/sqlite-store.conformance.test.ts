import { runStoreConformance } from '@colloquy/testkit/store-conformance';
import { afterAll } from 'vitest';
import { createTempDir } from '../test/helpers/temp-dir.js';
import { openSqliteStore } from './open-sqlite-store.js';

const temp = createTempDir();
afterAll(() => temp.cleanup());

runStoreConformance('SqliteStore on a temp file', () => openSqliteStore({ file: temp.file('store.db') }));
runStoreConformance('SqliteStore in memory', () => openSqliteStore({ file: ':memory:' }));
runStoreConformance('SqliteStore with group commit', () =>
  openSqliteStore({ file: temp.file('group.db'), groupCommit: true }),
);
runStoreConformance('SqliteStore with group commit, one transaction per batch', () =>
  openSqliteStore({ file: temp.file('group-1.db'), groupCommit: { maxTransactions: 1 } }),
);
