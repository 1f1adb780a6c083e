import type { ThreadBinding, ThreadBindingAccess } from '@colloquy/core';
import { describe, expect, it } from 'vitest';
import { createBindingKeeper } from './binding-keeper.js';

function memoryAccess(): ThreadBindingAccess & { rows: Map<string, ThreadBinding> } {
  const rows = new Map<string, ThreadBinding>();
  return {
    rows,
    get: (a, t) => rows.get(`${a}:${t}`),
    put: (b) => void rows.set(`${b.accountId}:${b.threadId}`, { channel: 'discord', ...b }),
    touch: (a, t, at) => {
      const row = rows.get(`${a}:${t}`);
      if (row) rows.set(`${a}:${t}`, { ...row, lastActiveAt: at });
    },
    remove: (a, t) => void rows.delete(`${a}:${t}`),
    list: () => [...rows.values()],
  };
}

const MINUTE = 60_000;

describe('createBindingKeeper', () => {
  it('binds a thread with an expiry one idle period away', () => {
    let now = 1_000_000;
    const access = memoryAccess();
    const keeper = createBindingKeeper({ access, idleMs: 30 * MINUTE, now: () => now });
    keeper.bind({ accountId: 'a', conversationId: 'c', threadId: 't', sessionKey: 'agent:main:subagent:x' });
    expect(access.get('a', 't')).toEqual({
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
    expect(keeper.active('a', 't')?.sessionKey).toBe('agent:main:subagent:x');
  });

  it('treats an idle binding as absent and removes it', () => {
    let now = 0;
    const access = memoryAccess();
    const keeper = createBindingKeeper({ access, idleMs: 30 * MINUTE, now: () => now });
    keeper.bind({ accountId: 'a', conversationId: 'c', threadId: 't', sessionKey: 'k' });
    now = 30 * MINUTE;
    expect(keeper.active('a', 't')).toBeUndefined();
    expect(access.rows.size).toBe(0);
  });

  it('pushes expiry back on activity', () => {
    let now = 0;
    const access = memoryAccess();
    const keeper = createBindingKeeper({ access, idleMs: 30 * MINUTE, now: () => now });
    keeper.bind({ accountId: 'a', conversationId: 'c', threadId: 't', sessionKey: 'k' });
    now = 20 * MINUTE;
    keeper.touch(keeper.active('a', 't')!);
    now = 45 * MINUTE;
    expect(keeper.active('a', 't')).toMatchObject({ lastActiveAt: 20 * MINUTE, expiresAt: 50 * MINUTE });
  });

  it('sweeps only expired bindings, and keeps everything when idle time is 0', () => {
    let now = 0;
    const access = memoryAccess();
    const keeper = createBindingKeeper({ access, idleMs: MINUTE, now: () => now });
    keeper.bind({ accountId: 'a', conversationId: 'c', threadId: 'old', sessionKey: 'k1' });
    now = 50_000;
    keeper.bind({ accountId: 'a', conversationId: 'c', threadId: 'new', sessionKey: 'k2' });
    now = 70_000;
    expect(keeper.sweep()).toBe(1);
    expect(access.list().map((b) => b.threadId)).toEqual(['new']);

    const forever = createBindingKeeper({ access, idleMs: 0, now: () => now });
    now = 10 ** 12;
    expect(forever.sweep()).toBe(0);
    expect(forever.active('a', 'new')).toBeDefined();
  });
});
