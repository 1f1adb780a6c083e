// WhatsApp fails for a while. Baileys keeps no queue of its own: a send on a closed socket throws
// (428), and one WhatsApp answers with an error or never answers throws that status (503, 408). The
// plugin waits a moment for a reconnect, then fails the send as retryable, so the runtime's
// delivery outbox keeps the reply (stored as `queued`) and sends it once WhatsApp is back, each
// once, in order per chat. `COLLOQUY_OUTAGE_MS=60000` runs the full minute of issue 33.

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { resolveConfig } from '@colloquy/core';
import type { Store } from '@colloquy/core/store';
import { createRuntime, type Runtime } from '@colloquy/runtime';
import { openSqliteStore } from '@colloquy/store-sqlite';
import { createScriptedModel, lastUserText } from '@colloquy/testkit';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { useAtomicAuthState } from '../src/auth-state.js';
import { createWhatsAppPlugin, type WhatsAppPluginOptions } from '../src/plugin.js';
import { dm, FakeWhatsApp, type FakeWhatsAppOutage } from './fake-socket.js';

const OUTAGE_MS = Number(process.env.COLLOQUY_OUTAGE_MS ?? 2500);
const CHATS = ['15552220001', '15552220002', '15552220003'].map((n) => `${n}@s.whatsapp.net`);
const ROUNDS = 4;
/** The model's answer takes this long: a link outage begins while the turns are under way. */
const ANSWER_MS = 300;

let fake: FakeWhatsApp;
let stateDir: string;
let runtime: Runtime | undefined;

beforeEach(async () => {
  fake = new FakeWhatsApp();
  stateDir = await mkdtemp(join(tmpdir(), 'colloquy-wa-outage-'));
  const auth = await useAtomicAuthState(join(stateDir, 'auth'));
  auth.state.creds.me = fake.account;
  await auth.saveCreds();
});

afterEach(async () => {
  await runtime?.shutdown({ drainMs: 200 });
  runtime = undefined;
  await rm(stateDir, { recursive: true, force: true });
});

/** The real runtime with the WhatsApp plugin on the fake, retrying sends every 100-400 ms. */
async function boot(store: Store, options: Partial<WhatsAppPluginOptions> = {}): Promise<Runtime> {
  const model = createScriptedModel((request) => ({
    text: `echo: ${lastUserText(request)}`,
    delayMs: ANSWER_MS,
  }));
  const plugin = createWhatsAppPlugin({
    stateDir,
    makeSocket: fake.makeSocket,
    qrOutput: false,
    reconnect: { initialDelayMs: 50, maxDelayMs: 200 },
    config: { dmPolicy: 'open' },
    ...options,
  });
  const booted = createRuntime({
    config: resolveConfig({
      agents: { defaults: { model: 'scripted/echo' } },
      runtime: { deliveryRetry: { firstDelayMs: 100, maxDelayMs: 400 } },
    }),
    store,
    plugins: [plugin],
    models: new Map([['scripted/echo', { provider: model, modelId: 'echo' }]]),
  });
  await booted.start();
  runtime = booted;
  await waitUntil(() => plugin.status().state === 'connected' || fake.outage?.link === true, 'the link');
  return booted;
}

const openStore = () => openSqliteStore({ file: join(stateDir, 'colloquy.db') });
const text = (chat: number, round: number) => `m${chat}-${round}`;
const sentTo = (jid: string) => fake.sent.filter((m) => m.jid === jid).map((m) => m.text);

/** A bounded poll: the outbox and the store have no event to wait on. */
async function waitUntil(check: () => boolean | Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 15_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Each chat writes one message a round; a round ends when its replies are in the outbox. */
async function writeDuringOutage(active: Runtime, rounds: number): Promise<void> {
  for (let round = 0; round < rounds; round++) {
    CHATS.forEach((jid, i) => {
      fake.current.deliver([dm(jid, text(i, round))]);
    });
    const expected = CHATS.length * (round + 1);
    await waitUntil(() => active.outbox().pending === expected, `${expected} replies in the outbox`);
  }
}

/** After recovery: every chat got each of its replies exactly once, in the order it wrote. */
async function expectEveryReplyOnceInOrder(active: Runtime, rounds: number): Promise<number> {
  const total = CHATS.length * rounds;
  const since = performance.now();
  await waitUntil(() => fake.sent.length >= total, 'every reply');
  const lastReplyMs = performance.now() - since;
  await waitUntil(() => active.outbox().pending === 0, 'an empty outbox');
  CHATS.forEach((jid, i) => {
    expect(sentTo(jid)).toEqual(Array.from({ length: rounds }, (_, round) => `echo: ${text(i, round)}`));
  });
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
  console.info(`[outage] whatsapp, ${what}: last reply ${Math.round(lastReplyMs)} ms after the outage ended`);
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

/** Waits out what is left of the outage, then ends it. */
async function endOutageAfter(down: number): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, Math.max(0, OUTAGE_MS - (Date.now() - down))));
  fake.endOutage();
}

describe.each<[string, Partial<FakeWhatsAppOutage>]>([
  ['answers service-unavailable (503)', { statusCode: 503 }],
  ['times out (408)', { statusCode: 408 }],
])('whatsapp: the link stays up, but every send %s for a while', (name, how) => {
  it(
    'keeps the replies in the outbox, shows the backlog, and sends each once in order per chat after',
    async () => {
      const store = await openStore();
      const active = await boot(store);
      fake.startOutage(how);
      const down = Date.now();
      await writeDuringOutage(active, ROUNDS);
      // The owner sees the backlog while WhatsApp is down.
      await waitUntil(() => active.outbox().failingTargets === CHATS.length, 'every chat failing');
      expect(active.outbox()).toMatchObject({ pending: CHATS.length * ROUNDS, byChannel: { whatsapp: 12 } });
      expect(fake.sent).toHaveLength(0);
      await endOutageAfter(down);
      reportRecovery(name, await expectEveryReplyOnceInOrder(active, ROUNDS));
      await expectDelivered(store, CHATS.length * ROUNDS);
    },
    OUTAGE_MS + 60_000,
  );
});

describe('whatsapp: the link goes down and reconnects fail for a while', () => {
  it(
    'keeps the replies of the turns under way, and sends each once after the reconnect',
    async () => {
      const store = await openStore();
      // A send waits 300 ms for the reconnect, then leaves the reply to the outbox.
      const active = await boot(store, { sendTimeoutMs: 300 });
      CHATS.forEach((jid, i) => {
        fake.current.deliver([dm(jid, text(i, 0))]);
      });
      fake.startOutage({ statusCode: 408, link: true });
      const down = Date.now();
      await waitUntil(() => active.outbox().failingTargets === CHATS.length, 'every chat failing');
      expect(active.outbox()).toMatchObject({ pending: CHATS.length, byChannel: { whatsapp: 3 } });
      await endOutageAfter(down);
      reportRecovery('the link down', await expectEveryReplyOnceInOrder(active, 1));
      expect(fake.sockets.length).toBeGreaterThan(2);
      await expectDelivered(store, CHATS.length);
    },
    OUTAGE_MS + 60_000,
  );

  it('leaves the waiting replies stored when it stops, and the next process sends each once', async () => {
    // The default send timeout: at shutdown the replies still wait for the reconnect in the plugin.
    const first = await boot(await openStore());
    CHATS.forEach((jid, i) => {
      fake.current.deliver([dm(jid, text(i, 0))]);
    });
    fake.startOutage({ statusCode: 408, link: true });
    await waitUntil(() => first.outbox().pending === CHATS.length, 'the replies in the outbox');
    await first.shutdown({ drainMs: 200 });
    runtime = undefined;

    const store = await openStore();
    expect(await deliveryStatuses(store)).toEqual(Array(CHATS.length).fill('queued'));
    const second = await boot(store);
    expect(second.outbox().pending).toBe(CHATS.length);
    fake.endOutage();
    reportRecovery('a restart during it', await expectEveryReplyOnceInOrder(second, 1));
    await expectDelivered(store, CHATS.length);
  }, 60_000);
});
