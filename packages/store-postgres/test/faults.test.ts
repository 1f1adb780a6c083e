import { createServer, type Socket } from 'node:net';
import { type StoreTransaction, turnOperations } from '@colloquy/core/store';
import { makeRunRecord, makeSessionRecord } from '@colloquy/testkit';
import { startTestPostgres, type TestPostgres } from '@colloquy/testkit/postgres';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkPostgresConnection } from '../src/check-connection.js';
import { redactDatabaseUrl } from '../src/database-url.js';
import { migrate, POSTGRES_SCHEMA_VERSION } from '../src/migrations.js';
import { openPostgresStore, type PostgresStore } from '../src/postgres-store.js';

let server: TestPostgres;
beforeAll(async () => {
  server = await startTestPostgres();
});
afterAll(() => server?.stop());

const say = (text: string) => ({ role: 'user' as const, content: text, timestamp: 1 });
// A fake credential, assembled at run time so no scanner mistakes this file for a leak.
const API_KEY = ['sk-proj-', '4f9A8b7C6d5E4f3G2h1I0', 'jKlMnOpQrStUv'].join('');

/** A loopback port nothing listens on. */
async function closedPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const port = (probe.address() as { port: number }).port;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

describe('bad connection settings', () => {
  it('names host and port of an unreachable server, never the password', async () => {
    const port = await closedPort();
    const url = `postgres://bot:hunter2-secret@127.0.0.1:${port}/colloquy`;
    const check = await checkPostgresConnection(url, { timeoutMs: 2000 });
    expect(check).toMatchObject({ ok: false, problem: 'unreachable' });
    const message = check.ok ? '' : check.message;
    expect(message).toContain(`127.0.0.1:${port}`);
    expect(message).not.toContain('hunter2-secret');
    const opening = await openPostgresStore({ url, connectionTimeoutMs: 2000 }).catch((e: unknown) => e);
    expect(opening).toMatchObject({ code: 'STORE_ERROR' });
    expect((opening as Error).message).toContain(`127.0.0.1:${port}`);
    expect((opening as Error).message).not.toContain('hunter2-secret');
  });

  it('tells a wrong password and a missing database apart', async () => {
    const wrong = server.url.replace(`:${server.password}@`, ':not-the-password@');
    const auth = await checkPostgresConnection(wrong);
    expect(auth).toMatchObject({ ok: false, problem: 'authentication' });
    expect(auth.ok ? '' : auth.message).not.toContain('not-the-password');
    expect(auth.ok ? '' : auth.message).toContain(redactDatabaseUrl(wrong));
    const missing = await checkPostgresConnection(server.url.replace(/\/postgres$/, '/no_such_db'));
    expect(missing).toMatchObject({ ok: false, problem: 'database-missing' });
    expect(await checkPostgresConnection(server.url)).toMatchObject({ ok: true });
    expect(await checkPostgresConnection('mysql://x/y')).toMatchObject({ ok: false, problem: 'invalid-url' });
  });
});

/** A loopback server that accepts connections and never answers (a hung server). */
async function silentServer(): Promise<{ port: number; close: () => Promise<void> }> {
  const held: Socket[] = [];
  const silent = createServer((socket) => held.push(socket));
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  return {
    port: (silent.address() as { port: number }).port,
    close: async () => {
      for (const socket of held) socket.destroy();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
    },
  };
}

/**
 * Opens a transaction on `store` and keeps it (and so its pooled connection) open until `release`,
 * which runs `last` in it and commits.
 */
async function holdConnection(
  store: PostgresStore,
  last: (tx: StoreTransaction) => Promise<unknown>,
): Promise<{ release: () => Promise<void> }> {
  let release = () => {};
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  let holds = () => {};
  const holding = new Promise<void>((resolve) => {
    holds = resolve;
  });
  const transaction = store.transaction(async (tx) => {
    holds();
    await released;
    await last(tx);
  });
  await holding;
  return {
    release: async () => {
      release();
      await transaction;
    },
  };
}

describe('waiting for a connection', () => {
  it('gives up opening a connection to a server that does not answer after connectionTimeoutMs', async () => {
    const hung = await silentServer();
    try {
      const started = performance.now();
      const opening = await openPostgresStore({
        url: `postgres://bot:secret@127.0.0.1:${hung.port}/colloquy`,
        connectionTimeoutMs: 300,
      }).catch((e: unknown) => e);
      expect(opening).toMatchObject({ code: 'STORE_ERROR', details: { retryable: true } });
      // The pool's wait in line (checkoutTimeoutMs, 60 s by default) does not stretch the opening.
      expect(performance.now() - started).toBeLessThan(10_000);
    } finally {
      await hung.close();
    }
  });

  it('serves a burst larger than the pool in line, after connectionTimeoutMs, within checkoutTimeoutMs', async () => {
    const store = await openPostgresStore({
      url: await server.createDatabase(),
      maxConnections: 1,
      // Long enough to open a connection on a loaded machine, short beside the wait in line below.
      connectionTimeoutMs: 1500,
      checkoutTimeoutMs: 30_000,
    });
    try {
      await store.putSession(makeSessionRecord('k1'));
      // The pool's one connection stays busy in a transaction past connectionTimeoutMs.
      const busy = await holdConnection(store, (tx) =>
        tx.appendMessages('k1', [say('from the transaction')]),
      );
      const waiting = Array.from({ length: 5 }, (_, i) => store.appendMessages('k1', [say(`queued ${i}`)]));
      await new Promise((resolve) => setTimeout(resolve, 2500)); // longer than connectionTimeoutMs in line
      await busy.release();
      await Promise.all(waiting);
      // Served in the order they came.
      expect((await store.readTail('k1', 6)).map((m) => m.content)).toEqual([
        'from the transaction',
        ...Array.from({ length: 5 }, (_, i) => `queued ${i}`),
      ]);
    } finally {
      await store.close();
    }
  });

  it("fails a call that waited checkoutTimeoutMs in line with a retryable STORE_ERROR, reason 'pool-busy'", async () => {
    const store = await openPostgresStore({
      url: await server.createDatabase(),
      maxConnections: 1,
      checkoutTimeoutMs: 300,
    });
    try {
      const busy = await holdConnection(store, async () => {});
      const refused = await store.getSession('k1').catch((e: unknown) => e);
      await busy.release();
      expect(refused).toMatchObject({
        code: 'STORE_ERROR',
        details: { retryable: true, reason: 'pool-busy' },
      });
      // The connection is free again: the next call is served.
      expect(await store.getSession('k1')).toBeUndefined();
    } finally {
      await store.close();
    }
  });
});

/** A fresh database whose schema is the one `version` wrote, with a client on it. */
async function schemaAt(version: number): Promise<{ url: string; client: pg.Client }> {
  const url = await server.createDatabase();
  const client = new pg.Client({ connectionString: url, options: '-c search_path=colloquy' });
  await client.connect();
  await migrate(client, 'colloquy', version);
  return { url, client };
}

/** Writes a session row and its transcript as any schema from version 1 on holds them. */
async function writeRows(client: pg.Client, key: string, messages: readonly string[]): Promise<void> {
  const record = makeSessionRecord(key);
  await client.query(
    `INSERT INTO sessions (key, session_id, agent_id, kind, updated_at, record, next_seq)
     VALUES ($1, $2, $3, $4, $5, $6, $7)`,
    [
      key,
      record.sessionId,
      record.agentId,
      record.kind,
      record.updatedAt,
      JSON.stringify(record),
      1 + messages.length,
    ],
  );
  for (const [i, text] of messages.entries()) {
    await client.query('INSERT INTO messages (session_key, seq, message) VALUES ($1, $2, $3)', [
      key,
      i + 1,
      JSON.stringify(say(text)),
    ]);
  }
}

describe('migrations', () => {
  it('gives the sessions of a version 2 schema stateVersion 0, then counts changes and keeps watches across a reopen', async () => {
    const { url, client } = await schemaAt(2);
    await writeRows(client, 'k1', ['before watching existed']);
    await writeRows(client, 'k2', []);
    await client.end();
    const migrated = await openPostgresStore({ url });
    expect((await migrated.getSession('k1'))?.stateVersion ?? 0).toBe(0);
    await migrated.putWatch({ watcherKey: 'k2', targetKey: 'k1', afterVersion: 0, id: 'w1', createdAt: 1 });
    await migrated.createRun(makeRunRecord('r1', 'k1', { status: 'running' }));
    await migrated.close();
    const reopened = await openPostgresStore({ url });
    expect((await reopened.getSession('k1'))?.stateVersion).toBe(1);
    expect((await reopened.readChanges('k1', 0))?.changes).toEqual({ message: 0, status: 1, patch: 0 });
    expect((await reopened.listWatches({ due: true })).map((w) => w.id)).toEqual(['w1']);
    await reopened.close();
  });

  it('moves the versions of a version 3 schema out of the records and keeps counting from them', async () => {
    const { url, client } = await schemaAt(3);
    await writeRows(client, 'k1', ['one', 'two']);
    // Version 3 counted through triggers and mirrored the version into the record.
    await client.query(`UPDATE sessions SET record = (record::jsonb || '{"label": "renamed"}')::json`);
    await client.query(
      'INSERT INTO runs (run_id, session_key, status, created_at, record) VALUES ($1, $2, $3, $4, $5)',
      ['r1', 'k1', 'running', 1, JSON.stringify(makeRunRecord('r1', 'k1', { status: 'running' }))],
    );
    const before = await client.query(
      `SELECT state_version, record->>'stateVersion' AS mirrored FROM sessions`,
    );
    expect(before.rows).toEqual([{ state_version: '4', mirrored: '4' }]);
    await client.end();

    const store = await openPostgresStore({ url });
    const check = new pg.Client({ connectionString: url, options: '-c search_path=colloquy' });
    await check.connect();
    const after = await check.query(`SELECT state_version, record::text AS record FROM sessions`);
    expect(after.rows[0].state_version).toBe('4');
    expect(after.rows[0].record).not.toContain('stateVersion');
    expect(await store.getSession('k1')).toMatchObject({ label: 'renamed', stateVersion: 4 });
    expect((await store.listSessions()).map((s) => s.stateVersion)).toEqual([4]);

    // Messages written before keep their search entries; a platform id set now lives in its column.
    expect((await store.searchMessages({ text: 'two' })).hits.map((h) => h.message.seq)).toEqual([2]);
    await store.setMessagePlatformId('k1', 2, 'platform-2');
    expect((await store.readTail('k1', 1))[0]).toMatchObject({
      content: 'two',
      platformMessageId: 'platform-2',
    });
    const row = await check.query(`SELECT message::text AS message FROM messages WHERE seq = 2`);
    expect(row.rows[0].message).not.toContain('platform-2');
    await store.appendMessages('k1', [say('three')]);
    await store.patchSession('k1', { label: 'again' });
    await store.putSession({ ...(await store.getSession('k1'))!, label: 'third', updatedAt: 5 });
    await store.patchSession('k1', { status: 'done', updatedAt: 6 });
    await store.updateRun('r1', { status: 'done' });
    expect((await store.getSession('k1'))?.stateVersion).toBe(8);
    // Since version 4: one message, two patches (the bookkeeping patch is none) and one status.
    expect((await store.readChanges('k1', 4))?.changes).toEqual({ message: 1, status: 1, patch: 2 });
    const triggers = await check.query(
      `SELECT tgname FROM pg_trigger WHERE NOT tgisinternal ORDER BY tgname`,
    );
    expect(triggers.rows.map((row) => row.tgname)).toEqual(['runs_state_version']);
    await check.end();
    await store.close();
  });

  it("rewrites every search entry of a version 4 schema from core's words: no secret stays indexed, and words its parser or locale missed are found", async () => {
    const { url, client } = await schemaAt(4);
    await writeRows(client, 'k1', [`the key is ${API_KEY} for now`, 'Встреча в Москве, see example.com']);
    // More messages than one re-indexing batch holds.
    await client.query(`INSERT INTO messages (session_key, seq, message)
      SELECT 'k1', 2 + g, json_build_object('role', 'user', 'content', 'filler message ' || (g - 1), 'timestamp', 1)
      FROM generate_series(1, 2400) AS g`);
    // What a version 4 append wrote: the database's own words of the text.
    await client.query(`UPDATE messages SET search = to_tsvector('simple'::regconfig, message->>'content')`);
    const secretWord = API_KEY.slice(8).toLowerCase();
    const indexed = async (word: string) =>
      Number(
        (
          await client.query(`SELECT count(*) FROM messages WHERE search @@ plainto_tsquery('simple', $1)`, [
            word,
          ])
        ).rows[0].count,
      );
    expect(await indexed(secretWord)).toBe(1);
    expect(await indexed('москве')).toBe(0);
    await client.end();

    const store = await openPostgresStore({ url });
    const total = async (text: string) => (await store.searchMessages({ text, limit: 0 })).total;
    expect(await total(secretWord)).toBe(0);
    expect(await total('key is now')).toBe(1);
    expect(await total('москве example')).toBe(1);
    expect(await total('filler message')).toBe(2400);
    expect(await total('filler 2399')).toBe(1);
    await store.close();
  });

  it('creates the schema once, re-opens without changes, and two stores opening at once both succeed', async () => {
    const url = await server.createDatabase();
    const [a, b] = await Promise.all([openPostgresStore({ url }), openPostgresStore({ url })]);
    await a.putSession(makeSessionRecord('k1'));
    expect((await b.getSession('k1'))?.key).toBe('k1');
    await Promise.all([a.close(), b.close()]);
    const again = await openPostgresStore({ url });
    expect((await again.getSession('k1'))?.key).toBe('k1');
    await again.close();
  });

  it('indexes the transcripts a version 1 schema holds when it migrates to transcript search', async () => {
    const { url, client } = await schemaAt(1);
    await writeRows(client, 'k1', ['written before search existed']);
    await client.end();
    const migrated = await openPostgresStore({ url });
    const found = await migrated.searchMessages({ text: 'before SEARCH' });
    expect(found.hits.map((h) => [h.sessionKey, h.message.seq, h.message.content])).toEqual([
      ['k1', 1, 'written before search existed'],
    ]);
    await migrated.close();
  });

  it('gives a version 7 schema the turn operations: a session and run written before turn into a begun and ended turn', async () => {
    const { url, client } = await schemaAt(7);
    await writeRows(client, 'k1', ['written before schema 8']);
    await client.end();
    const store = await openPostgresStore({ url });
    expect(store.schemaVersion).toBe(POSTGRES_SCHEMA_VERSION);
    const run = makeRunRecord('r1', 'k1', { message: 'after the upgrade' });
    const turns = turnOperations(store);
    const committed = await turns.commitInbound({
      session: { create: makeSessionRecord('k1'), update: { updatedAt: 2 } },
      run,
      begin: { input: say(run.message), run: { ...run, status: 'running' }, session: { status: 'running' } },
    });
    expect(committed).toMatchObject({ status: 'begun', input: { seq: 2 }, session: { status: 'running' } });
    const ended = await turns.endTurn({
      sessionKey: 'k1',
      finalMessage: { role: 'assistant', content: 'answered', timestamp: 3 },
      runs: [{ runId: 'r1', patch: { status: 'done' } }],
      session: { status: 'done' },
    });
    expect(ended).toMatchObject({
      finalMessage: { seq: 3 },
      runs: [{ status: 'done' }],
      session: { status: 'done' },
    });
    expect((await store.readTail('k1', 5)).map((m) => m.content)).toEqual([
      'written before schema 8',
      'after the upgrade',
      'answered',
    ]);
    await store.close();
  });

  it("moves the status, times, attempts and delivery state of a version 8 schema's runs into their columns", async () => {
    const { url, client } = await schemaAt(8);
    await writeRows(client, 'k1', []);
    const plan = { kind: 'reply', text: 'hi', finalSeq: 2 };
    const delivery = { kind: 'reply', status: 'delivered', messageId: 'p-1', messageIds: ['p-1'], at: 7 };
    const runs = [
      makeRunRecord('r-done', 'k1', {
        status: 'done',
        createdAt: 1,
        updatedAt: 6,
        startedAt: 2,
        endedAt: 6,
        attempts: 2,
        reply: 'hi',
        meta: { requeuedAt: 3, pendingDelivery: plan, delivery },
      }),
      makeRunRecord('r-queued', 'k1', {
        status: 'queued',
        createdAt: 4,
        updatedAt: 4,
        meta: { delivery: null },
      }),
      // A record holding a NUL (no JSON operator reads it) and a time no bigint holds stay in the JSON.
      makeRunRecord('r-nul', 'k1', {
        status: 'running',
        createdAt: 5,
        message: 'a\u0000b',
        meta: { delivery },
      }),
      makeRunRecord('r-odd', 'k1', { status: 'running', createdAt: 6, updatedAt: 6.5, meta: [1] as never }),
    ];
    for (const run of runs) {
      await client.query(
        'INSERT INTO runs (run_id, session_key, status, created_at, record) VALUES ($1, $2, $3, $4, $5)',
        [run.runId, run.sessionKey, run.status, run.createdAt, JSON.stringify(run)],
      );
    }
    await client.end();

    const store = await openPostgresStore({ url });
    expect(store.schemaVersion).toBe(POSTGRES_SCHEMA_VERSION);
    for (const run of runs) expect(await store.getRun(run.runId)).toEqual(run);
    expect((await store.listRuns({ statuses: ['queued'] })).map((r) => r.runId)).toEqual(['r-queued']);
    const check = new pg.Client({ connectionString: url, options: '-c search_path=colloquy' });
    await check.connect();
    const columns = `SELECT status, updated_at, started_at, ended_at, attempts, pending_delivery::text AS pending,
      delivery::text AS delivery, record::text AS record FROM runs WHERE run_id = $1`;
    const done = (await check.query(columns, ['r-done'])).rows[0];
    expect(done).toMatchObject({
      status: 'done',
      updated_at: '6',
      started_at: '2',
      ended_at: '6',
      attempts: 2,
      pending: JSON.stringify(plan),
      delivery: JSON.stringify(delivery),
    });
    expect(JSON.parse(done.record)).toEqual({
      runId: 'r-done',
      sessionKey: 'k1',
      lane: 'main',
      createdAt: 1,
      message: 'hello',
      deliver: false,
      reply: 'hi',
      meta: { requeuedAt: 3 },
    });
    expect((await check.query(columns, ['r-queued'])).rows[0]).toMatchObject({ delivery: 'null' });
    expect((await check.query(columns, ['r-odd'])).rows[0]).toMatchObject({ updated_at: null, attempts: 0 });

    // Marks write the columns alone: the JSON stays as it was, and reads see the whole record.
    const before = (await check.query(columns, ['r-queued'])).rows[0].record;
    const started = await store.updateRun('r-queued', { status: 'running', startedAt: 5, attempts: 1 });
    expect(started).toEqual({ ...runs[1], status: 'running', startedAt: 5, attempts: 1 });
    expect((await check.query(columns, ['r-queued'])).rows[0].record).toBe(before);
    // The record holding a NUL is ended and delivered like any other.
    const failed = { kind: 'reply' as const, status: 'failed' as const, error: 'down', at: 8 };
    await store.recordDeliveries([{ runId: 'r-nul', sessionKey: 'k1', state: failed }]);
    await store.updateRun('r-nul', { status: 'done', reply: 'c\u0000d', endedAt: 9 });
    expect(await store.getRun('r-nul')).toEqual({
      ...runs[2],
      status: 'done',
      reply: 'c\u0000d',
      endedAt: 9,
      meta: { delivery: failed },
    });
    await check.end();
    await store.close();
  });

  it('refuses a schema written by a newer version and changes nothing', async () => {
    const url = await server.createDatabase();
    const store = await openPostgresStore({ url });
    await store.close();
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    await client.query('UPDATE colloquy.schema_version SET version = 999');
    const refused = await openPostgresStore({ url }).catch((e: unknown) => e);
    expect(refused).toMatchObject({ code: 'STORE_VERSION' });
    expect((refused as Error).message).toContain('newer Colloquy');
    const version = await client.query('SELECT version FROM colloquy.schema_version');
    expect(version.rows).toEqual([{ version: 999 }]);
    await client.end();
  });
});

describe('a connection lost in the middle of a transaction', () => {
  it('rolls the transaction back, reports STORE_ERROR, and the store keeps working', async () => {
    const url = await server.createDatabase();
    const database = new URL(url).pathname.slice(1);
    const store = await openPostgresStore({ url });
    await store.putSession(makeSessionRecord('k1'));
    const outcome = await store
      .transaction(async (tx) => {
        await tx.createRun(makeRunRecord('r1', 'k1'));
        await tx.appendMessages('k1', [say('half-written')]);
        await server.terminateConnections(database);
        await tx.patchSession('k1', { label: 'never' });
      })
      .catch((e: unknown) => e);
    expect(outcome).toMatchObject({ code: 'STORE_ERROR' });
    expect(await store.getRun('r1')).toBeUndefined();
    expect(await store.countMessages('k1')).toBe(0);
    expect((await store.getSession('k1'))?.label).toBeUndefined();
    await store.appendMessages('k1', [say('after')]);
    expect((await store.readTail('k1', 5)).map((m) => [m.seq, m.content])).toEqual([[1, 'after']]);
    await store.close();
  });
});
