import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { resolveConfig } from '@colloquy/core';
import type { Store } from '@colloquy/core/store';
import { createRuntime, type Runtime } from '@colloquy/runtime';
import { openSqliteStore } from '@colloquy/store-sqlite';
import { createScriptedModel, lastUserText } from '@colloquy/testkit';
import { FakeTelegram, type PlatformOutage } from '@colloquy/testkit/telegram-fake';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createTelegramPlugin } from '../src/index.js';

// The Bot API answers 5xx (or resets connections) for a while: replies stay in the runtime's
// delivery outbox (stored as `queued` on their runs) and go out once it recovers, each once, in
// order per chat. The window is short here; `COLLOQUY_OUTAGE_MS=60000` runs the full minute of
// issue 33.
const OUTAGE_MS = Number(process.env.COLLOQUY_OUTAGE_MS ?? 2500);
const TOKEN = '4004:outage-token';
const CHATS = [101, 102, 103];
const ROUNDS = 4;
/** The send path fails; updates still come in, so replies pile up in the outbox meanwhile. */
const SEND_METHODS = ['sendMessage', 'sendChatAction'];

let fake: FakeTelegram;
let stateDir: string;
let runtime: Runtime | undefined;

beforeEach(async () => {
  fake = await FakeTelegram.start();
  fake.addBot(TOKEN, { id: 4004, username: 'outage_bot' });
  for (const id of CHATS) fake.addChat(id, { type: 'private' });
  stateDir = await mkdtemp(join(tmpdir(), 'colloquy-tg-outage-'));
});

afterEach(async () => {
  await runtime?.shutdown({ drainMs: 200 });
  runtime = undefined;
  await fake.close();
  await rm(stateDir, { recursive: true, force: true });
});

/** The real runtime with the Telegram plugin on the fake, retrying sends every 100-400 ms. */
async function boot(store: Store): Promise<Runtime> {
  const model = createScriptedModel((request) => `echo: ${lastUserText(request)}`);
  const booted = createRuntime({
    config: resolveConfig({
      agents: { defaults: { model: 'scripted/test' } },
      runtime: { deliveryRetry: { firstDelayMs: 100, maxDelayMs: 400 } },
    }),
    store,
    plugins: [
      createTelegramPlugin({
        config: { accounts: [{ token: TOKEN, apiRoot: fake.apiRoot }], dmPolicy: 'open' },
        stateDir,
        pollTimeoutSeconds: 1,
        startTimeoutMs: 3000,
      }),
    ],
    models: (ref) => (ref.startsWith('scripted/') ? { provider: model, modelId: ref.slice(9) } : undefined),
  });
  await booted.start();
  runtime = booted;
  return booted;
}

const text = (chat: number, round: number) => `m${chat}-${round}`;

/** Each chat writes one message a round; a round ends when its replies are in the outbox. */
async function writeDuringOutage(active: Runtime): Promise<void> {
  for (let round = 0; round < ROUNDS; round++) {
    for (const id of CHATS) {
      fake.pushMessage(TOKEN, {
        chat: { id, type: 'private', first_name: `U${id}` },
        from: { id, is_bot: false, first_name: `U${id}` },
        text: text(id, round),
      });
    }
    const expected = CHATS.length * (round + 1);
    await waitUntil(() => active.outbox().pending === expected, `${expected} replies in the outbox`);
  }
}

/** A bounded poll: the outbox and the store have no event to wait on. */
async function waitUntil(
  check: () => boolean | Promise<boolean>,
  what: string,
  timeoutMs = 15_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** After recovery: every chat got each of its replies exactly once, in the order it wrote. */
async function expectEveryReplyOnceInOrder(active: Runtime): Promise<number> {
  const total = CHATS.length * ROUNDS;
  const since = performance.now();
  await fake.waitFor(() => fake.sent.length >= total, OUTAGE_MS + 20_000, 'every reply');
  const lastReplyMs = performance.now() - since;
  await waitUntil(() => active.outbox().pending === 0, 'an empty outbox');
  for (const id of CHATS) {
    expect(fake.sentTo(id).map((m) => m.visibleText)).toEqual(
      Array.from({ length: ROUNDS }, (_, round) => `echo: ${text(id, round)}`),
    );
  }
  expect(fake.sent).toHaveLength(total);
  expect(active.outbox()).toEqual({ pending: 0, failingTargets: 0, byChannel: {} });
  return lastReplyMs;
}

/**
 * With `COLLOQUY_OUTAGE_MS` set (the long run for issue 33's table), prints how long after the
 * outage ended the last reply went out.
 */
function reportRecovery(what: string, lastReplyMs: number): void {
  if (process.env.COLLOQUY_OUTAGE_MS === undefined) return;
  console.info(`[outage] telegram, ${what}: last reply ${Math.round(lastReplyMs)} ms after the outage ended`);
}

async function deliveryStatuses(store: Store): Promise<string[]> {
  const runs = await store.listRuns({ statuses: ['done'] });
  return runs.map((run) => (run.meta?.delivery as { status: string } | undefined)?.status ?? 'none');
}

/** The store says `delivered` for `count` replies. A delivery is recorded after its send, in a batch. */
async function expectDelivered(store: Store, count: number): Promise<void> {
  const recorded = async () => (await deliveryStatuses(store)).filter((s) => s === 'delivered').length;
  await waitUntil(async () => (await recorded()) >= count, `${count} deliveries recorded`);
  expect(await deliveryStatuses(store)).toEqual(Array(count).fill('delivered'));
}

const openStore = () => openSqliteStore({ file: join(stateDir, 'colloquy.db') });

describe.each<[string, PlatformOutage]>([
  ['answers 502', { status: 502 }],
  ['resets connections', { reset: true }],
])('telegram: the Bot API %s for a while', (name, how) => {
  it(
    'keeps the replies in the outbox, shows the backlog, and sends each once in order per chat after',
    async () => {
      const store = await openStore();
      const active = await boot(store);
      fake.startOutage({ ...how, methods: SEND_METHODS });
      const down = Date.now();
      await writeDuringOutage(active);
      // The owner sees the backlog while the platform is down.
      await waitUntil(() => active.outbox().failingTargets === CHATS.length, 'every chat failing');
      expect(active.outbox()).toMatchObject({ pending: CHATS.length * ROUNDS, byChannel: { telegram: 12 } });
      // Stored as waiting; each chat's head is `sending` while a retry of it is under way.
      await waitUntil(async () => {
        const statuses = await deliveryStatuses(store);
        return statuses.filter((status) => status === 'queued').length >= statuses.length - CHATS.length;
      }, 'the replies stored as queued');
      for (const status of await deliveryStatuses(store)) expect(['queued', 'sending']).toContain(status);
      expect(fake.sent).toHaveLength(0);
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, OUTAGE_MS - (Date.now() - down))));
      fake.endOutage();
      reportRecovery(name, await expectEveryReplyOnceInOrder(active));
      await expectDelivered(store, CHATS.length * ROUNDS);
    },
    OUTAGE_MS + 60_000,
  );
});

describe('telegram: a restart while the Bot API is down', () => {
  it('leaves the waiting replies stored, and the next process sends each once in order per chat', async () => {
    const first = await boot(await openStore());
    fake.startOutage({ status: 503, methods: SEND_METHODS });
    await writeDuringOutage(first);
    await first.shutdown({ drainMs: 200 });
    runtime = undefined;
    expect(fake.sent).toHaveLength(0);

    const store = await openStore();
    expect(await deliveryStatuses(store)).toEqual(Array(CHATS.length * ROUNDS).fill('queued'));
    const second = await boot(store);
    // Still down after the restart: the next process keeps them, and shows them as its backlog.
    expect(second.outbox().pending).toBe(CHATS.length * ROUNDS);
    await waitUntil(() => second.outbox().failingTargets === CHATS.length, 'every chat failing again');
    fake.endOutage();
    reportRecovery('a restart during it', await expectEveryReplyOnceInOrder(second));
    await expectDelivered(store, CHATS.length * ROUNDS);
  }, 60_000);
});
