import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ChannelPlugin } from '@colloquy/core';
import type { GatewayEvent } from '@colloquy/core/gateway';
import { MemoryStore, type Store, type StoreTransaction } from '@colloquy/core/store';
import { openSqliteStore } from '@colloquy/store-sqlite';
import { createMemoryChannel, makeSessionRecord } from '@colloquy/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { type Harness, startHarness, waitFor } from './support/harness.js';

const DM = 'agent:main:memory:dm:user-1';
const GROUP = 'agent:main:memory:group:g1';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

async function seedGroup(harness: Harness, overrides: Parameters<typeof makeSessionRecord>[1] = {}) {
  await harness.store.putSession(
    makeSessionRecord(GROUP, {
      kind: 'group',
      chatType: 'group',
      channel: 'memory',
      deliveryContext: { channel: 'memory', to: 'g1', accountId: 'default' },
      ...overrides,
    }),
  );
}

describe('delivery pipeline', () => {
  it('chat.send delivers through the plugin and records the platform message id in the transcript', async () => {
    h = await startHarness();
    await seedGroup(h);
    const outcome = await h.runtime.gateway.call('chat.send', { key: GROUP, text: 'hello group' });
    expect(outcome).toEqual({ status: 'delivered', messageId: 'memory-out-1', messageIds: ['memory-out-1'] });
    expect(h.channel.textsTo('g1')).toEqual(['hello group']);
    const [stored] = await h.store.readTail(GROUP, 1);
    expect(stored).toMatchObject({
      role: 'assistant',
      content: 'hello group',
      platformMessageId: 'memory-out-1',
    });
  });

  it('a send-policy rule that denies never reaches the plugin, on every outbound path', async () => {
    h = await startHarness({
      config: { session: { sendPolicy: { rules: [{ match: { chatType: 'group' }, action: 'deny' }] } } },
      script: ['a reply nobody sees'],
      typingIntervalMs: 10,
    });
    await seedGroup(h);
    const events: GatewayEvent[] = [];
    h.runtime.gateway.subscribe((e) => events.push(e));
    const outcome = await h.runtime.gateway.call('chat.send', { key: GROUP, text: 'hi' });
    expect(outcome).toMatchObject({ status: 'denied', reason: expect.any(String) });
    await h.channel.inject({ text: '@colloquy_bot hi', chat: { type: 'group', id: 'g1' } });
    await waitFor(
      async () => (await h!.store.listRuns({ sessionKey: GROUP }))[0]?.meta?.delivery !== undefined,
    );
    expect(h.channel.sent).toEqual([]);
    expect(h.channel.typing).toEqual([]);
    const [run] = await h.store.listRuns({ sessionKey: GROUP });
    expect(run?.meta?.delivery).toMatchObject({ kind: 'reply', status: 'denied' });
    expect(
      events.filter((e) => e.type === 'delivery').map((e) => e.type === 'delivery' && e.outcome.status),
    ).toEqual(['denied', 'denied']);
    expect(
      (await h.store.readTail(GROUP, 10))
        .filter((m) => m.role === 'assistant')
        .map((m) => m.platformMessageId),
    ).toEqual([undefined]);
  });

  it("a session's own override wins over the rules", async () => {
    h = await startHarness({
      config: { session: { sendPolicy: { rules: [{ match: { channel: 'memory' }, action: 'deny' }] } } },
    });
    await seedGroup(h, { sendPolicy: 'allow' });
    expect((await h.runtime.gateway.call('chat.send', { key: GROUP, text: 'allowed' })).status).toBe(
      'delivered',
    );
    await h.runtime.gateway.call('sessions.patch', { key: GROUP, patch: { sendPolicy: 'deny' } });
    expect((await h.runtime.gateway.call('chat.send', { key: GROUP, text: 'denied' })).status).toBe('denied');
    await h.runtime.gateway.call('sessions.patch', { key: GROUP, patch: { sendPolicy: null } });
    expect((await h.runtime.gateway.call('chat.send', { key: GROUP, text: 'rule' })).status).toBe('denied');
    expect(h.channel.textsTo('g1')).toEqual(['allowed']);
  });

  it('reports a failing plugin send as failed, and a session without a chat as skipped', async () => {
    h = await startHarness();
    await seedGroup(h);
    h.channel.failNextSend();
    expect(await h.runtime.gateway.call('chat.send', { key: GROUP, text: 'x' })).toMatchObject({
      status: 'failed',
      code: 'CHANNEL_ERROR',
    });
    await h.store.putSession(makeSessionRecord('agent:main:main', { kind: 'main' }));
    expect(await h.runtime.gateway.call('chat.send', { key: 'main', text: 'x' })).toMatchObject({
      status: 'skipped',
    });
  });

  it('delivers the final reply and records its platform message id on the run', async () => {
    h = await startHarness({ script: ['the answer'] });
    await h.channel.inject('question');
    await h.channel.waitForSent(1);
    // The reply is marked `sending` when the turn ends; its outcome is recorded after the send.
    const settled = async () => {
      const delivery = (await h!.store.listRuns({ sessionKey: DM }))[0]?.meta?.delivery as
        | { status?: string }
        | undefined;
      return delivery !== undefined && delivery.status !== 'sending';
    };
    await waitFor(settled);
    const [run] = await h.store.listRuns({ sessionKey: DM });
    expect(run?.meta?.delivery).toMatchObject({
      kind: 'reply',
      status: 'delivered',
      messageId: 'memory-out-1',
    });
    expect(h.channel.sent[0]).toMatchObject({ text: 'the answer', to: { channel: 'memory', to: 'user-1' } });
  });

  it("has the end of the turn and the reply's sending mark committed when the plugin is called (group commit)", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'colloquy-delivery-'));
    const file = join(dir, 'colloquy.db');
    const store = openSqliteStore({ file, groupCommit: true });
    // A second connection sees only what is committed: what a restart after a crash would find.
    const observer = openSqliteStore({ file, readonly: true });
    const channel = createMemoryChannel();
    const seenAtSend: unknown[] = [];
    const plugin: ChannelPlugin = {
      ...channel,
      async send(to, message) {
        const [run] = await observer.listRuns({ sessionKey: DM });
        const [final] = await observer.readTail(DM, 1);
        seenAtSend.push({ status: run?.status, delivery: run?.meta?.delivery, final: final?.content });
        return channel.send(to, message);
      },
    };
    try {
      h = await startHarness({ store, plugins: [plugin], script: ['the answer'] });
      await channel.inject('question');
      await channel.waitForSent(1);
      expect(seenAtSend).toEqual([
        {
          status: 'done',
          delivery: { kind: 'reply', status: 'sending', at: expect.any(Number) },
          final: 'the answer',
        },
      ]);
      await waitFor(async () => {
        const [run] = await observer.listRuns({ sessionKey: DM });
        return (run?.meta?.delivery as { status?: string } | undefined)?.status === 'delivered';
      });
    } finally {
      await h?.close();
      h = undefined;
      await observer.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("writes the reply's sending mark in the same run update that ends the turn", async () => {
    const store = new MemoryStore();
    const runWrites: Record<string, unknown>[] = [];
    const recordRunWrites = <T extends object>(target: T): T =>
      new Proxy(target, {
        get(object, name, receiver) {
          const value = Reflect.get(object, name, receiver);
          if (name === 'updateRun') {
            return (runId: string, patch: Record<string, unknown>) => {
              runWrites.push(patch);
              return (value as Store['updateRun']).call(object, runId, patch);
            };
          }
          if (name === 'transaction') {
            return <R>(work: (tx: StoreTransaction) => Promise<R>) =>
              (value as Store['transaction']).call(object, (tx) => work(recordRunWrites(tx)));
          }
          return typeof value === 'function' ? value.bind(object) : value;
        },
      });
    h = await startHarness({ store: recordRunWrites(store), script: ['the answer'] });
    await h.channel.inject('question');
    await h.channel.waitForSent(1);
    await waitFor(async () => {
      const [run] = await store.listRuns({ sessionKey: DM });
      return (run?.meta?.delivery as { status?: string } | undefined)?.status === 'delivered';
    });
    const statuses = runWrites.map((patch) => [
      patch.status,
      (patch.meta as { delivery?: { status?: string } } | undefined)?.delivery?.status,
    ]);
    // The turn began in the commit that stored its run (created `running`): no update begins it.
    expect(statuses).toEqual([
      ['done', 'sending'],
      [undefined, 'delivered'],
    ]);
  });

  it('records the platform message id on the stored reply', async () => {
    h = await startHarness({ script: ['the answer'] });
    await h.channel.inject('question');
    await waitFor(async () => (await h!.store.readTail(DM, 1))[0]?.platformMessageId === 'memory-out-1');
    const final = (await h.store.readTail(DM, 1))[0]!;
    expect(final).toMatchObject({
      role: 'assistant',
      content: 'the answer',
      platformMessageId: 'memory-out-1',
    });
  });

  it('shows a typing indicator while a run is active and refreshes it', async () => {
    const typingIntervalMs = 25;
    h = await startHarness({ script: [{ text: 'done', delayMs: 120 }], typingIntervalMs });
    await h.channel.inject('think hard');
    // The turn stops its typing before it sends the reply, so the count is final here.
    await h.channel.waitForSent(1);
    const count = h.channel.typing.length;
    expect(count).toBeGreaterThanOrEqual(2); // shown at the start, refreshed at least once
    expect(h.channel.typing[0]).toEqual({ channel: 'memory', to: 'user-1', accountId: 'default' });
    // Nothing to wait on for a refresh that must not come: three refresh periods are long enough
    // for a timer that outlived the turn to fire at least twice.
    await new Promise((resolve) => setTimeout(resolve, 3 * typingIntervalMs));
    expect(h.channel.typing.length).toBe(count);
  });

  it('shows no typing indicator for a reply that comes within typingDelayMs', async () => {
    h = await startHarness({ script: [{ text: 'quick' }], typingDelayMs: 10_000 });
    await h.channel.inject('quick one');
    await h.channel.waitForSent(1);
    expect(h.channel.typing).toEqual([]);
  });

  it('shows the typing indicator once typingDelayMs has passed', async () => {
    h = await startHarness({
      script: [{ text: 'slow', delayMs: 300 }],
      typingDelayMs: 20,
      typingIntervalMs: 60_000,
    });
    await h.channel.inject('slow one');
    await h.channel.waitForSent(1);
    expect(h.channel.typing).toEqual([{ channel: 'memory', to: 'user-1', accountId: 'default' }]);
  });
});
