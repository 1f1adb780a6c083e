import type { Store } from '@colloquy/core/store';
import { openPostgresStore } from '@colloquy/store-postgres';
import { createTestDatabase, type RoundTripCounter, startRoundTripCounter } from '@colloquy/testkit/postgres';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { type Harness, startHarness, waitFor } from './support/harness.js';

const DM = 'agent:main:memory:dm:user-1';

let h: Harness | undefined;
let counter: RoundTripCounter | undefined;
let reader: Store | undefined;
afterEach(async () => {
  await h?.close();
  await reader?.close();
  await counter?.close();
  h = undefined;
  reader = undefined;
  counter = undefined;
});

/**
 * Sends one DM and waits until its reply was sent, its delivery recorded and the queue is idle;
 * `store` reads what it waits for on connections of its own, past the counter.
 */
async function dmTurn(harness: Harness, store: Store, text: string): Promise<void> {
  const sent = harness.channel.sent.length;
  await harness.channel.inject({ text, sender: { id: 'user-1', name: 'Ada' }, messageId: text });
  await harness.channel.waitForSent(sent + 1);
  await waitFor(async () => {
    const [run] = await store.listRuns({ sessionKey: DM, limit: 1 });
    return (run?.meta?.delivery as { status?: string } | undefined)?.status === 'delivered';
  });
  await waitFor(() => {
    const stats = harness.runtime.stats();
    return stats.pending === 0 && stats.lanes.main.running === 0;
  });
  for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
}

describe('the round trips of a turn on PostgreSQL', () => {
  it('a plain DM turn makes at most 6 round trips on PostgreSQL', async () => {
    const url = await createTestDatabase(inject('postgresUrl'));
    counter = await startRoundTripCounter(url);
    h = await startHarness({
      script: ['first answer', 'second answer'],
      store: await openPostgresStore({ url: counter.url }),
    });
    reader = await openPostgresStore({ url });
    // The first message creates the session and fills the history cache; the second is the turn a
    // conversation repeats.
    await dmTurn(h, reader, 'hello');
    counter.reset();
    await dmTurn(h, reader, 'and again');
    expect(counter.count()).toBeLessThanOrEqual(6);
  });
});
