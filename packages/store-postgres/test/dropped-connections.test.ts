import { collectUnhandledErrors, makeSessionRecord, type UnhandledErrors } from '@colloquy/testkit';
import { startTestPostgres, type TestPostgres } from '@colloquy/testkit/postgres';
import type pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { openPostgresStore, type PostgresStore } from '../src/postgres-store.js';

let server: TestPostgres;
beforeAll(async () => {
  server = await startTestPostgres();
});
afterAll(() => server?.stop());

let unhandled: UnhandledErrors;
beforeAll(() => {
  unhandled = collectUnhandledErrors();
});
afterAll(() => unhandled.stop());

const stores: PostgresStore[] = [];
afterEach(async () => {
  await Promise.all(stores.splice(0).map((store) => store.close()));
  expect(unhandled.errors.splice(0)).toEqual([]);
});

async function openStore(): Promise<{ store: PostgresStore; database: string; pool: pg.Pool }> {
  const url = await server.createDatabase();
  const store = await openPostgresStore({ url, maxConnections: 4 });
  stores.push(store);
  // The pool is private; the test reaches it to watch connections being handed out.
  const pool = (store as unknown as { pool: pg.Pool }).pool;
  return { store, database: new URL(url).pathname.slice(1), pool };
}

const say = (text: string) => ({ role: 'user' as const, content: text, timestamp: 1 });
const settle = () => new Promise((resolve) => setTimeout(resolve, 50));

describe('connections the server drops', () => {
  it('survives every idle connection being terminated, and the next calls reconnect', async () => {
    const { store, database } = await openStore();
    // Four connections at once leave four idle ones in the pool.
    await Promise.all(['k1', 'k2', 'k3', 'k4'].map((key) => store.putSession(makeSessionRecord(key))));
    expect(await server.terminateConnections(database)).toBeGreaterThanOrEqual(1);
    await settle();
    expect((await store.getSession('k1'))?.key).toBe('k1');
    await store.appendMessages('k2', [say('after the drop')]);
    expect((await store.readTail('k2', 1)).map((m) => m.content)).toEqual(['after the drop']);
  });

  it('fails the transaction holding a terminated connection with a STORE_ERROR and keeps working', async () => {
    const { store, database } = await openStore();
    await store.putSession(makeSessionRecord('k1'));
    let dropped!: () => void;
    const droppedNow = new Promise<void>((resolve) => {
      dropped = resolve;
    });
    const outcome = store
      .transaction(async (tx) => {
        await tx.appendMessages('k1', [say('never committed')]);
        // The connection sits checked out and idle while the server ends it.
        await droppedNow;
        await tx.patchSession('k1', { label: 'never' });
      })
      .catch((error: unknown) => error);
    await settle();
    expect(await server.terminateConnections(database)).toBeGreaterThanOrEqual(1);
    await settle();
    dropped();
    expect(await outcome).toMatchObject({
      code: 'STORE_ERROR',
      message: expect.stringContaining('failed or was lost'),
    });
    expect(await store.countMessages('k1')).toBe(0);
    await store.appendMessages('k1', [say('after the drop')]);
    expect((await store.readTail('k1', 5)).map((m) => m.content)).toEqual(['after the drop']);
  });

  it('survives a connection that fails the moment the pool hands it out, and runs the call on a fresh one', async () => {
    const { store, pool, database } = await openStore();
    // No idle connection is left: the call below opens a fresh one.
    await server.terminateConnections(database);
    await settle();
    // A socket error already on its way (queued behind the connection's ready answer) reaches the
    // client after the pool handed it out, before the caller's code runs again.
    let failNext = true;
    pool.on('acquire', (client) => {
      if (!failNext) return;
      failNext = false;
      const connection = (client as unknown as { connection: { emit(event: string, error: Error): void } })
        .connection;
      process.nextTick(() =>
        connection.emit('error', Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' })),
      );
    });
    await store.putSession(makeSessionRecord('k1'));
    await settle();
    expect(failNext).toBe(false);
    expect((await store.getSession('k1'))?.key).toBe('k1');
  });
});
