import { createHash } from 'node:crypto';
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { isColloquyError } from '@colloquy/core';
import { makeRunRecord, makeSessionRecord } from '@colloquy/testkit';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { createTempDir } from '../test/helpers/temp-dir.js';
import { indexedTextSql } from './message-search-sql.js';
import { COLLOQUY_APPLICATION_ID, MIGRATIONS, migrate, SQLITE_SCHEMA_VERSION } from './migrations.js';
import { openSqliteStore } from './open-sqlite-store.js';
import type { SqliteStore } from './sqlite-store.js';

const temp = createTempDir();
afterAll(() => temp.cleanup());

// A fake credential, assembled at run time so no scanner mistakes this file for a leak.
const API_KEY = ['sk-proj-', '4f9A8b7C6d5E4f3G2h1I0', 'jKlMnOpQrStUv'].join('');

function thrown(fn: () => unknown): { code: string; message: string; details: Record<string, unknown> } {
  try {
    fn();
  } catch (error) {
    if (isColloquyError(error)) return { code: error.code, message: error.message, details: error.details };
    throw error;
  }
  throw new Error('expected a ColloquyError, nothing was thrown');
}

/** Bytes and modification time of a file, to prove a refused file was not touched. */
function fingerprint(file: string): { sha256: string; mtimeMs: number; siblings: boolean[] } {
  return {
    sha256: createHash('sha256').update(readFileSync(file)).digest('hex'),
    mtimeMs: statSync(file).mtimeMs,
    siblings: [existsSync(`${file}-wal`), existsSync(`${file}-shm`), existsSync(`${file}-journal`)],
  };
}

/** A store file written by an older release: the schema history up to `version`, plus data. */
function writeOldStore(file: string, version: number): void {
  const db = new Database(file);
  migrate(db, version);
  db.prepare(
    `INSERT INTO sessions (key, session_id, agent_id, kind, updated_at, archived_at, record) VALUES (?, ?, ?, ?, ?, ?, ?)`,
  ).run(
    'agent:main:main',
    'sid-1',
    'main',
    'main',
    5,
    null,
    JSON.stringify(makeSessionRecord('agent:main:main', { sessionId: 'sid-1', updatedAt: 5 })),
  );
  db.prepare('INSERT INTO messages (session_key, seq, message) VALUES (?, ?, ?)').run(
    'agent:main:main',
    1,
    JSON.stringify({ role: 'user', content: 'from v1', timestamp: 1, seq: 1 }),
  );
  db.close();
}

describe('openSqliteStore', () => {
  it('creates a fresh file (and its directory) at the current schema in WAL mode', async () => {
    const file = join(temp.dir, 'nested', 'dir', 'fresh.db');
    const store = openSqliteStore({ file });
    expect(store.schemaVersion).toBe(SQLITE_SCHEMA_VERSION);
    expect(store.synchronous).toBe('NORMAL');
    await store.close();
    const db = new Database(file, { readonly: true });
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(db.pragma('user_version', { simple: true })).toBe(SQLITE_SCHEMA_VERSION);
    expect(db.pragma('application_id', { simple: true })).toBe(COLLOQUY_APPLICATION_ID);
    db.close();
  });

  it('has at least two schema versions, numbered 1..n in order', async () => {
    expect(MIGRATIONS.map((m) => m.version)).toEqual(MIGRATIONS.map((_, i) => i + 1));
    expect(SQLITE_SCHEMA_VERSION).toBeGreaterThanOrEqual(2);
  });

  it.each(MIGRATIONS.slice(0, -1).map((m) => m.version))(
    'migrates a version %i file forward, keeping its data',
    async (version) => {
      const file = temp.file(`v${version}.db`);
      writeOldStore(file, version);
      const store = openSqliteStore({ file });
      expect(store.schemaVersion).toBe(SQLITE_SCHEMA_VERSION);
      expect((await store.listSessions({ kinds: ['main'], limit: 5 })).map((s) => s.sessionId)).toEqual([
        'sid-1',
      ]);
      expect((await store.readTail('agent:main:main', 5)).map((m) => m.content)).toEqual(['from v1']);
      expect((await store.searchMessages({ text: 'FROM v1' })).hits.map((h) => h.message.content)).toEqual([
        'from v1',
      ]);
      expect((await store.integrityCheck()).ok).toBe(true);
      await store.close();
    },
  );

  it('gives sessions of a version 5 file stateVersion 0, then counts their changes and keeps watches across a reopen', async () => {
    const file = temp.file('v5-watch.db');
    writeOldStore(file, 5);
    const store = openSqliteStore({ file });
    expect((await store.getSession('agent:main:main'))?.stateVersion ?? 0).toBe(0);
    expect((await store.readChanges('agent:main:main', 0))?.toVersion).toBe(0);
    await store.putSession(makeSessionRecord('agent:main:other'));
    await store.putWatch({
      watcherKey: 'agent:main:other',
      targetKey: 'agent:main:main',
      afterVersion: 0,
      id: 'w1',
      createdAt: 1,
    });
    await store.appendMessages('agent:main:main', [{ role: 'assistant', content: 'after v6', timestamp: 2 }]);
    await store.close();
    const reopened = openSqliteStore({ file });
    expect((await reopened.getSession('agent:main:main'))?.stateVersion).toBe(1);
    expect((await reopened.readChanges('agent:main:main', 0))?.changes).toEqual({
      message: 1,
      status: 0,
      patch: 0,
    });
    expect((await reopened.listWatches({ due: true })).map((w) => w.id)).toEqual(['w1']);
    expect((await reopened.integrityCheck()).ok).toBe(true);
    await reopened.close();
  });

  it('moves the state versions of a version 6 file into their column only, and keeps counting', async () => {
    const file = temp.file('v6-versions.db');
    writeOldStore(file, 6);
    const old = new Database(file);
    // Version 6 mirrored the version in the record's JSON; two messages were counted.
    old
      .prepare('INSERT INTO messages (session_key, seq, message) VALUES (?, ?, ?)')
      .run(
        'agent:main:main',
        2,
        JSON.stringify({ role: 'assistant', content: 'in v6', timestamp: 2, seq: 2 }),
      );
    expect(old.prepare('SELECT record ->> ? FROM sessions').pluck().get('$.stateVersion')).toBe(2);
    old.close();
    const store = openSqliteStore({ file });
    expect((await store.getSession('agent:main:main'))?.stateVersion).toBe(2);
    await store.appendMessages('agent:main:main', [{ role: 'user', content: 'in v7', timestamp: 3 }]);
    expect((await store.getSession('agent:main:main'))?.stateVersion).toBe(3);
    expect((await store.listSessions({ limit: 5 }))[0]?.stateVersion).toBe(3);
    const patched = await store.patchSession('agent:main:main', { label: 'renamed' });
    expect(patched.stateVersion).toBe(4);
    await store.close();
    const db = new Database(file, { readonly: true });
    expect(
      db.prepare('SELECT state_version, record ->> ? FROM sessions').raw().get('$.stateVersion'),
    ).toEqual([4, null]);
    db.close();
  });

  it('indexes the archived sessions and the active runs of a version 7 file', async () => {
    const file = temp.file('v7-indexes.db');
    writeOldStore(file, 7);
    const old = new Database(file);
    const archived = makeSessionRecord('agent:main:old', { sessionId: 'sid-2', updatedAt: 9, archivedAt: 9 });
    old
      .prepare(
        'INSERT INTO sessions (key, session_id, agent_id, kind, updated_at, archived_at, record) VALUES (?, ?, ?, ?, ?, ?, ?)',
      )
      .run(archived.key, 'sid-2', 'main', archived.kind, 9, 9, JSON.stringify(archived));
    const insertRun = old.prepare(
      'INSERT INTO runs (run_id, session_key, status, created_at, record) VALUES (?, ?, ?, ?, ?)',
    );
    for (const [i, status] of (['queued', 'running', 'done'] as const).entries()) {
      const run = makeRunRecord(`r${i}`, 'agent:main:main', { status, createdAt: i });
      insertRun.run(run.runId, run.sessionKey, status, i, JSON.stringify(run));
    }
    old.close();
    const store = openSqliteStore({ file });
    expect((await store.listSessions({})).map((s) => s.key)).toEqual(['agent:main:main']);
    expect((await store.listSessions({ includeArchived: true })).map((s) => s.key)).toEqual([
      'agent:main:old',
      'agent:main:main',
    ]);
    expect(await store.countSessions({ includeArchived: true, kinds: [archived.kind, 'main'] })).toBe(2);
    expect((await store.listRuns({ statuses: ['queued', 'running'] })).map((r) => r.runId)).toEqual([
      'r1',
      'r0',
    ]);
    expect((await store.listRuns({ statuses: ['done'] })).map((r) => r.runId)).toEqual(['r2']);
    expect((await store.integrityCheck()).ok).toBe(true);
    await store.close();
  });

  it("moves the status, times, attempts and delivery state of a version 11 file's runs into their columns", async () => {
    const file = temp.file('v11-runs.db');
    writeOldStore(file, 11);
    const old = new Database(file);
    const delivery = { kind: 'reply', status: 'delivered', messageId: 'p-1', messageIds: ['p-1'], at: 7 };
    const plan = { kind: 'reply', text: 'hi', finalSeq: 2 };
    const runs = [
      makeRunRecord('r-done', 'agent:main:main', {
        status: 'done',
        createdAt: 1,
        updatedAt: 6,
        startedAt: 2,
        endedAt: 6,
        attempts: 2,
        reply: 'hi',
        meta: { requeuedAt: 3, pendingDelivery: plan, delivery },
      }),
      makeRunRecord('r-queued', 'agent:main:main', { status: 'queued', createdAt: 4, updatedAt: 4 }),
    ];
    const insertRun = old.prepare(
      'INSERT INTO runs (run_id, session_key, status, created_at, record) VALUES (?, ?, ?, ?, ?)',
    );
    for (const run of runs)
      insertRun.run(run.runId, run.sessionKey, run.status, run.createdAt, JSON.stringify(run));
    old.close();

    const store = openSqliteStore({ file });
    expect(store.schemaVersion).toBe(SQLITE_SCHEMA_VERSION);
    expect(await store.getRun('r-done')).toEqual(runs[0]);
    expect(await store.getRun('r-queued')).toEqual(runs[1]);
    expect(await store.listRuns({ statuses: ['queued', 'running'] })).toEqual([runs[1]]);
    // The marks of a turn change the columns alone, and reads still see the whole record.
    await store.updateRun('r-queued', { status: 'running', startedAt: 5, attempts: 1 });
    expect(await store.getRun('r-queued')).toEqual({
      ...runs[1],
      status: 'running',
      startedAt: 5,
      attempts: 1,
    });
    await store.close();
    const db = new Database(file, { readonly: true });
    expect(
      db
        .prepare(
          "SELECT status, updated_at, started_at, ended_at, attempts, pending_delivery, delivery, record -> '$.meta' FROM runs WHERE run_id = 'r-done'",
        )
        .raw()
        .get(),
    ).toEqual(['done', 6, 2, 6, 2, JSON.stringify(plan), JSON.stringify(delivery), '{"requeuedAt":3}']);
    expect(
      db
        .prepare("SELECT json_type(record, '$.status'), json_type(record, '$.attempts') FROM runs")
        .raw()
        .all(),
    ).toEqual([
      [null, null],
      [null, null],
    ]);
    db.close();
  });

  it('rebuilds the search index of a version 8 file: no secret stays indexed, no message stays unindexed, ids stop being reused', async () => {
    const file = temp.file('v8-search.db');
    writeOldStore(file, 8);
    const old = new Database(file);
    const key = 'agent:main:main';
    const gone = 'agent:main:gone';
    const session = makeSessionRecord(gone, { sessionId: 'sid-2' });
    old
      .prepare(
        'INSERT INTO sessions (key, session_id, agent_id, kind, updated_at, record) VALUES (?, ?, ?, ?, ?, ?)',
      )
      .run(gone, 'sid-2', 'main', session.kind, 1, JSON.stringify(session));
    const append = old.prepare('INSERT INTO messages (session_key, seq, message) VALUES (?, ?, ?)');
    const say = (text: string, seq: number) =>
      JSON.stringify({ role: 'user', content: text, timestamp: 1, seq });
    // What a version 8 search did before searching: index what is new with FTS5's own words.
    const catchUp = () =>
      old.exec(`INSERT INTO messages_search (rowid, body)
          SELECT id, ${indexedTextSql('message')} FROM messages WHERE id > (SELECT indexed_up_to FROM search_state);
        UPDATE search_state SET indexed_up_to = (SELECT max(id) FROM messages)`);
    append.run(key, 2, say(`the key is ${API_KEY} for now`, 2));
    append.run(gone, 1, say('newest', 1));
    append.run(gone, 2, say('newest too', 2));
    catchUp();
    const secretWord = API_KEY.slice(8).toLowerCase();
    const indexedOld = old
      .prepare('SELECT count(*) FROM messages_search WHERE messages_search MATCH ?')
      .pluck();
    expect(indexedOld.get(`"${secretWord}"`)).toBe(1);
    // Deleting the session holding the newest ids frees them: new messages get ids the watermark passed.
    old.prepare('DELETE FROM sessions WHERE key = ?').run(gone);
    append.run(key, 3, say('zebra one', 3));
    append.run(key, 4, say('zebra two', 4));
    const reused = old
      .prepare('SELECT max(id) <= (SELECT indexed_up_to FROM search_state) FROM messages')
      .pluck();
    expect(reused.get()).toBe(1);
    old.close();

    const store = openSqliteStore({ file });
    const total = async (text: string) => (await store.searchMessages({ text })).total;
    expect(await total('zebra')).toBe(2);
    expect(await total(secretWord)).toBe(0);
    expect(await total('key is now')).toBe(1);
    expect(await total('FROM v1')).toBe(1);
    await store.putSession(makeSessionRecord(gone, { sessionId: 'sid-3' }));
    await store.appendMessages(gone, [{ role: 'user', content: 'narwhal', timestamp: 2 }]);
    expect(await total('narwhal')).toBe(1);
    await store.deleteSession(gone);
    await store.appendMessages(key, [{ role: 'user', content: 'narwhal again', timestamp: 3 }]);
    expect(await total('narwhal')).toBe(1);
    expect((await store.integrityCheck()).ok).toBe(true);
    await store.close();
    const check = new Database(file, { readonly: true });
    expect(check.prepare(`SELECT sql FROM sqlite_schema WHERE name = 'messages'`).pluck().get()).toMatch(
      /AUTOINCREMENT/,
    );
    check.close();
  });

  it('lets a second connection open a file another connection already migrated', async () => {
    const file = temp.file('twice.db');
    const first = openSqliteStore({ file });
    const second = openSqliteStore({ file });
    await first.putSession(makeSessionRecord('k1'));
    expect((await second.getSession('k1'))?.key).toBe('k1');
    await first.close();
    await second.close();
  });

  it('refuses a file from a newer schema version with STORE_VERSION, leaving it untouched', async () => {
    const file = temp.file('future.db');
    const db = new Database(file);
    migrate(db);
    db.pragma(`user_version = ${SQLITE_SCHEMA_VERSION + 1}`);
    db.close();
    const before = fingerprint(file);
    const error = thrown(() => openSqliteStore({ file }));
    expect(error.code).toBe('STORE_VERSION');
    expect(error.message).toContain(file);
    expect(error.message).toContain(`schema version ${SQLITE_SCHEMA_VERSION + 1}`);
    expect(error.message).toContain(`${SQLITE_SCHEMA_VERSION}`);
    expect(error.details).toMatchObject({
      fileVersion: SQLITE_SCHEMA_VERSION + 1,
      supportedVersion: SQLITE_SCHEMA_VERSION,
    });
    expect(fingerprint(file)).toEqual(before);
  });

  it('sees a newer version that is still only in the write-ahead log, not yet in the file header', async () => {
    const file = temp.file('future-in-wal.db');
    openSqliteStore({ file }).close();
    const newer = new Database(file);
    newer.pragma('wal_autocheckpoint = 0');
    newer.pragma(`user_version = ${SQLITE_SCHEMA_VERSION + 1}`);
    try {
      const before = fingerprint(file);
      expect(readFileSync(file).readInt32BE(60)).toBe(SQLITE_SCHEMA_VERSION);
      expect(thrown(() => openSqliteStore({ file })).code).toBe('STORE_VERSION');
      expect(fingerprint(file)).toEqual(before);
    } finally {
      newer.close();
    }
  });

  it('refuses a file that is not an SQLite database with STORE_CORRUPT naming it, without writing to it', async () => {
    const file = temp.file('notes.txt');
    writeFileSync(file, 'these are my notes, not a database\n'.repeat(200));
    const before = fingerprint(file);
    const error = thrown(() => openSqliteStore({ file }));
    expect(error.code).toBe('STORE_CORRUPT');
    expect(error.message).toContain(file);
    expect(fingerprint(file)).toEqual(before);
  });

  it('refuses a file with the SQLite header but garbage after it', async () => {
    const file = temp.file('garbage.db');
    writeFileSync(
      file,
      Buffer.concat([Buffer.from('SQLite format 3\u0000', 'latin1'), Buffer.alloc(8192, 0xab)]),
    );
    const before = fingerprint(file);
    const error = thrown(() => openSqliteStore({ file }));
    expect(error.code).toBe('STORE_CORRUPT');
    expect(error.message).toContain(file);
    expect(fingerprint(file)).toEqual(before);
  });

  it('refuses a store whose schema page is damaged', async () => {
    const file = temp.file('damaged.db');
    const store = openSqliteStore({ file });
    await store.putSession(makeSessionRecord('k1'));
    await store.close();
    const bytes = readFileSync(file);
    bytes.fill(0xff, 100, 4096); // the rest of page 1: the b-tree of sqlite_schema
    writeFileSync(file, bytes);
    const before = fingerprint(file);
    const error = thrown(() => openSqliteStore({ file }));
    expect(error.code).toBe('STORE_CORRUPT');
    expect(error.message).toContain(file);
    expect(fingerprint(file)).toEqual(before);
  });

  it("refuses another application's SQLite database with INVALID_ARGUMENT, without writing to it", () => {
    const file = temp.file('other-app.db');
    const db = new Database(file);
    db.exec('CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT)');
    db.close();
    const before = fingerprint(file);
    const error = thrown(() => openSqliteStore({ file }));
    expect(error.code).toBe('INVALID_ARGUMENT');
    expect(error.message).toContain(file);
    expect(fingerprint(file)).toEqual(before);
  });

  it('adopts an empty file as a new store', async () => {
    const file = temp.file('empty.db');
    writeFileSync(file, '');
    const store = openSqliteStore({ file });
    expect(store.schemaVersion).toBe(SQLITE_SCHEMA_VERSION);
    await store.close();
  });

  it('opens readonly only an existing store at the current version', async () => {
    expect(thrown(() => openSqliteStore({ file: temp.file('missing.db'), readonly: true })).code).toBe(
      'STORE_ERROR',
    );
    const old = temp.file('old.db');
    writeOldStore(old, 1);
    const before = fingerprint(old);
    expect(thrown(() => openSqliteStore({ file: old, readonly: true })).code).toBe('STORE_VERSION');
    expect(fingerprint(old)).toEqual(before);
  });

  it('validates its options', async () => {
    const file = temp.file('options.db');
    expect(thrown(() => openSqliteStore({ file: '' })).code).toBe('INVALID_ARGUMENT');
    expect(thrown(() => openSqliteStore({ file, busyTimeoutMs: -1 })).code).toBe('INVALID_ARGUMENT');
    expect(thrown(() => openSqliteStore({ file, walAutocheckpointPages: 1.5 })).code).toBe(
      'INVALID_ARGUMENT',
    );
    expect(thrown(() => openSqliteStore({ file, synchronous: 'OFF' as unknown as 'FULL' })).code).toBe(
      'INVALID_ARGUMENT',
    );
    expect(existsSync(file)).toBe(false);
  });

  it('checkpoints the log automatically at walAutocheckpointPages, and never with 0', async () => {
    const walBytes = async (pages: number) => {
      const file = temp.file(`wal-${pages}.db`);
      const store = openSqliteStore({ file, walAutocheckpointPages: pages });
      for (let i = 0; i < 40; i++) await store.putSession(makeSessionRecord(`k${i}`));
      const bytes = statSync(`${file}-wal`).size;
      await store.close();
      return bytes;
    };
    // The log is rewritten from its start after each checkpoint, so its file stays small; without
    // checkpoints it holds a frame (a page) or more for every commit.
    const never = await walBytes(0);
    expect(never).toBeGreaterThanOrEqual(40 * 4096);
    expect(await walBytes(4)).toBeLessThan(never / 2);
  });

  it("keeps a writer's rollback journals for savepoints and statements in memory, not in temporary files", async () => {
    const file = temp.file('temp-store.db');
    const store = openSqliteStore({ file });
    const pragma = (s: SqliteStore) =>
      (s as unknown as { sqlite: { db: Database.Database } }).sqlite.db.pragma('temp_store', {
        simple: true,
      });
    expect(pragma(store)).toBe(2); // MEMORY
    await store.close();
    // A readonly store writes no journal; its search may fill a temporary table, which stays on disk.
    const reader = openSqliteStore({ file, readonly: true });
    expect(pragma(reader)).toBe(0); // DEFAULT
    await reader.close();
  });

  it('applies synchronous FULL when asked', async () => {
    const store = openSqliteStore({ file: temp.file('full.db'), synchronous: 'FULL' });
    expect(store.synchronous).toBe('FULL');
    await store.close();
  });
});
