import { openPostgresStore } from '@colloquy/store-postgres';
import { createTestDatabase, terminateTestConnections } from '@colloquy/testkit/postgres';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { type Harness, startHarness, waitFor } from './support/harness.js';

const DM = 'agent:main:memory:dm:user-1';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

describe('a PostgreSQL connection lost in the middle of a turn', () => {
  it('rolls the cut end of the turn back, stores it again on a new connection, and sends the answer once', async () => {
    const url = await createTestDatabase(inject('postgresUrl'));
    const database = new URL(url).pathname.slice(1);
    h = await startHarness({
      store: await openPostgresStore({ url }),
      script: ['first reply', 'second reply'],
    });
    let cuts = 0;
    // Runs inside the transaction that ends the turn, after the final message was appended: the
    // first end loses its connection there; the runtime stores the end again.
    h.runtime.onTurnEnd(async () => {
      if (cuts > 0) return;
      cuts++;
      await terminateTestConnections(inject('postgresUrl'), database);
    });

    await h.channel.inject('first');
    await h.channel.waitForSent(1, 10_000);
    expect(cuts).toBe(1);
    expect(h.channel.sent.map((m) => m.text)).toEqual(['first reply']);
    const store = h.store;
    await waitFor(async () => (await store.listRuns({ sessionKey: DM }))[0]?.status === 'done', 5000);
    // The cut end left nothing half-written: the final message is in the transcript once.
    expect((await store.readTail(DM, 10)).map((m) => m.content)).toEqual(['first', 'first reply']);

    await h.channel.inject('second');
    await h.channel.waitForSent(2);
    expect(h.channel.sent.map((m) => m.text).at(-1)).toBe('second reply');
    const after = await store.readTail(DM, 10);
    expect(after.map((m) => [m.role, m.content])).toEqual([
      ['user', 'first'],
      ['assistant', 'first reply'],
      ['user', 'second'],
      ['assistant', 'second reply'],
    ]);
  });
});
