import { createThreadBindingAccess } from '@colloquy/core/internal';
import { MemoryStore } from '@colloquy/core/store';
import { describe, expect, it } from 'vitest';
import { createBindingKeeper } from './binding-keeper.js';

const MINUTE = 60_000;

describe('createBindingKeeper', () => {
  it('binds a thread with an expiry one idle period away', async () => {
    let now = 1_000_000;
    const store = new MemoryStore();
    const access = createThreadBindingAccess(store, 'discord');
    const keeper = createBindingKeeper({ access, idleMs: 30 * MINUTE, now: () => now });
    await keeper.bind({
      accountId: 'a',
      conversationId: 'c',
      threadId: 't',
      sessionKey: 'agent:main:subagent:x',
    });
    expect(await access.get('a', 't')).toEqual({
      channel: 'discord',
      accountId: 'a',
      conversationId: 'c',
      threadId: 't',
      sessionKey: 'agent:main:subagent:x',
      createdAt: now,
      lastActiveAt: now,
      expiresAt: now + 30 * MINUTE,
    });
    now += 10 * MINUTE;
    expect((await keeper.active('a', 't'))?.sessionKey).toBe('agent:main:subagent:x');
  });

  it('treats an idle binding as absent and removes it', async () => {
    let now = 0;
    const store = new MemoryStore();
    const access = createThreadBindingAccess(store, 'discord');
    const keeper = createBindingKeeper({ access, idleMs: 30 * MINUTE, now: () => now });
    await keeper.bind({ accountId: 'a', conversationId: 'c', threadId: 't', sessionKey: 'k' });
    now = 30 * MINUTE;
    expect(await keeper.active('a', 't')).toBeUndefined();
    expect(await store.listThreadBindings()).toEqual([]);
  });

  it('pushes expiry back on activity', async () => {
    let now = 0;
    const store = new MemoryStore();
    const access = createThreadBindingAccess(store, 'discord');
    const keeper = createBindingKeeper({ access, idleMs: 30 * MINUTE, now: () => now });
    await keeper.bind({ accountId: 'a', conversationId: 'c', threadId: 't', sessionKey: 'k' });
    now = 20 * MINUTE;
    await keeper.touch((await keeper.active('a', 't'))!);
    now = 45 * MINUTE;
    expect(await keeper.active('a', 't')).toMatchObject({
      lastActiveAt: 20 * MINUTE,
      expiresAt: 50 * MINUTE,
    });
  });

  it('sweeps only expired bindings, and keeps everything when idle time is 0', async () => {
    let now = 0;
    const store = new MemoryStore();
    const access = createThreadBindingAccess(store, 'discord');
    const keeper = createBindingKeeper({ access, idleMs: MINUTE, now: () => now });
    await keeper.bind({ accountId: 'a', conversationId: 'c', threadId: 'old', sessionKey: 'k1' });
    now = 50_000;
    await keeper.bind({ accountId: 'a', conversationId: 'c', threadId: 'new', sessionKey: 'k2' });
    now = 70_000;
    expect(await keeper.sweep()).toBe(1);
    expect((await access.list()).map((b) => b.threadId)).toEqual(['new']);

    const forever = createBindingKeeper({ access, idleMs: 0, now: () => now });
    now = 10 ** 12;
    expect(await forever.sweep()).toBe(0);
    expect(await forever.active('a', 'new')).toBeDefined();
  });
});
