import { resolveConfig } from '@colloquy/core';
import { createRuntime, type Runtime } from '@colloquy/runtime';
import { openPostgresStore, type PostgresStore } from '@colloquy/store-postgres';
import { createMemoryChannel, createScriptedModel, type MemoryChannel } from '@colloquy/testkit';
import {
  type RoundTripCounter,
  startRoundTripCounter,
  startTestPostgres,
  type TestPostgres,
} from '@colloquy/testkit/postgres';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createPostgresCluster, type PostgresCluster } from '../src/index.js';
import { until } from './support/until.js';

const DM = 'agent:main:memory:dm:user-1';

let server: TestPostgres;
beforeAll(async () => {
  server = await startTestPostgres();
});
afterAll(async () => {
  await server?.stop();
});

let runtime: Runtime | undefined;
let reader: PostgresStore | undefined;
let counter: RoundTripCounter | undefined;
afterEach(async () => {
  await runtime?.shutdown({ drainMs: 200 });
  await reader?.close();
  await counter?.close();
  runtime = undefined;
  reader = undefined;
  counter = undefined;
});

/** Sends one DM and waits until its reply was sent and its delivery recorded. */
async function dmTurn(channel: MemoryChannel, store: PostgresStore, text: string): Promise<void> {
  const sent = channel.sent.length;
  await channel.inject({ text, sender: { id: 'user-1', name: 'Ada' }, messageId: text });
  await channel.waitForSent(sent + 1, 20_000);
  await until(async () => {
    const [run] = await store.listRuns({ sessionKey: DM, limit: 1 });
    return (run?.meta?.delivery as { status?: string } | undefined)?.status === 'delivered';
  }, `the delivery of "${text}" recorded`);
}

describe('the round trips of a turn in a cluster', () => {
  it("a plain DM turn makes at most 20 round trips on the store's connections", async () => {
    const url = await server.createDatabase();
    counter = await startRoundTripCounter(url);
    // The store goes through the counter; the cluster's own connections (job fetching, events,
    // the instance's heartbeat) do not: they poll on timers, not per turn.
    const store = await openPostgresStore({ url: counter.url });
    const cluster: PostgresCluster = await createPostgresCluster({ url });
    const channel = createMemoryChannel();
    const model = createScriptedModel(['first answer', 'second answer']);
    runtime = createRuntime({
      config: resolveConfig({ agents: { defaults: { model: 'scripted/test' } } }),
      store,
      cluster,
      plugins: [channel],
      models: () => ({ provider: model, modelId: 'test' }),
    });
    await runtime.start();
    reader = await openPostgresStore({ url });
    // The first message creates the session; the second is the turn a conversation repeats.
    await dmTurn(channel, reader, 'hello');
    counter.reset();
    await dmTurn(channel, reader, 'and again');
    // 34 before the inbound message took `commitInbound` with its job in one transaction, the
    // job read the session's runs once and the begun turn fed the history cache.
    expect(counter.count()).toBeLessThanOrEqual(20);
  });
});
