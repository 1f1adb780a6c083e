import { silentLogger, type ThreadBinding } from '@colloquy/core';
import { createThreadBindingAccess } from '@colloquy/core/internal';
import { MemoryStore } from '@colloquy/core/store';
import { describe, expect, it } from 'vitest';
import { migrateTopicBindings, topicBindingKey } from './topic-bindings.js';

const binding = (threadId: string, sessionKey: string): ThreadBinding => ({
  channel: 'telegram',
  accountId: 'main',
  conversationId: '-1001',
  threadId,
  sessionKey,
  createdAt: 1,
  lastActiveAt: 1,
});

describe('migrateTopicBindings', () => {
  it('moves bindings stored under the bare topic id to the chat and topic key, once', async () => {
    const store = new MemoryStore();
    await store.putThreadBinding(binding('7', 'agent:main:subagent:a'));
    await store.putThreadBinding(binding(topicBindingKey('-1001', '8'), 'agent:main:subagent:b'));
    const access = createThreadBindingAccess(store, 'telegram');
    expect(await migrateTopicBindings(access, silentLogger)).toBe(1);
    expect(await migrateTopicBindings(access, silentLogger)).toBe(0);
    expect((await access.list()).map((b) => [b.threadId, b.sessionKey]).sort()).toEqual([
      ['-1001:7', 'agent:main:subagent:a'],
      ['-1001:8', 'agent:main:subagent:b'],
    ]);
  });

  it('keeps the keyed binding when a move was cut short, dropping the bare one', async () => {
    const store = new MemoryStore();
    await store.putThreadBinding(binding('7', 'agent:main:subagent:old'));
    await store.putThreadBinding(binding('-1001:7', 'agent:main:subagent:new'));
    const access = createThreadBindingAccess(store, 'telegram');
    expect(await migrateTopicBindings(access, silentLogger)).toBe(0);
    expect(await access.list()).toEqual([
      expect.objectContaining({ threadId: '-1001:7', sessionKey: 'agent:main:subagent:new' }),
    ]);
  });
});
