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
  it('rolls the end of the turn back, finalises the run, and the session goes on', async () => {
    const url = await createTestDatabase(inject('postgresUrl'));
    const database = new URL(url).pathname.slice(1);
    h = await startHarness({
      store: await openPostgresStore({ url }),
      script: ['lost reply', 'second reply'],
    });
    let cut = true;
    // Runs inside the transaction that ends the turn, after the final message was appended.
    h.runtime.onTurnEnd(async () => {
      if (!cut) return;
      cut = false;
      await terminateTestConnections(inject('postgresUrl'), database);
    });

    await h.channel.inject('first');
    const store = h.store;
    await waitFor(async () => (await store.listRuns({ sessionKey: DM }))[0]?.status === 'error', 5000);
    const [failed] = await store.listRuns({ sessionKey: DM });
    expect(failed?.error).toMatch(/PostgreSQL/);
    // The final message of the cut turn was rolled back with it: nothing half-written stays.
    const transcript = await store.readTail(DM, 10);
    expect(transcript.map((m) => m.content)).toEqual(['first']);

    await h.channel.inject('second');
    await h.channel.waitForSent(2);
    expect(h.channel.sent.map((m) => m.text).at(-1)).toBe('second reply');
    const after = await store.readTail(DM, 10);
    expect(after.map((m) => [m.role, m.content])).toEqual([
      ['user', 'first'],
      ['user', 'second'],
      ['assistant', 'second reply'],
    ]);
  });
});
