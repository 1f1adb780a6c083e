import { describe, expect, it } from 'vitest';
import type { ChatMessage } from '../protocol/frames.js';
import { createChatHub } from './chat-hub.js';

const msg = (id: string, text = id): ChatMessage => ({ id, role: 'user', text, at: 1 });
const room = { type: 'group' as const, id: 'lobby' };

describe('chat history in the hub', () => {
  it('loads a chat once and keeps it up to date afterwards', async () => {
    let loads = 0;
    const hub = createChatHub({
      limit: 10,
      load: async () => {
        loads += 1;
        return [msg('a'), msg('b')];
      },
    });
    expect((await hub.history(room)).map((m) => m.id)).toEqual(['a', 'b']);
    hub.remember('lobby', msg('c'));
    expect((await hub.history(room)).map((m) => m.id)).toEqual(['a', 'b', 'c']);
    expect(loads).toBe(1);
  });

  it('keeps messages that arrive while loading, after the loaded ones, without duplicates', async () => {
    let release: (messages: ChatMessage[]) => void = () => {};
    const hub = createChatHub({
      limit: 10,
      load: () =>
        new Promise((resolve) => {
          release = resolve;
        }),
    });
    const pending = hub.history(room);
    hub.remember('lobby', msg('b'));
    hub.remember('lobby', msg('c'));
    release([msg('a'), msg('b')]);
    expect((await pending).map((m) => m.id)).toEqual(['a', 'b', 'c']);
  });

  it('keeps only the last `limit` messages and survives a failing load', async () => {
    const hub = createChatHub({ limit: 3, load: async () => Promise.reject(new Error('gateway down')) });
    expect(await hub.history(room)).toEqual([]);
    for (const id of ['1', '2', '3', '4', '5']) hub.remember('lobby', msg(id));
    expect((await hub.history(room)).map((m) => m.id)).toEqual(['3', '4', '5']);
  });

  it('does not keep history for chats nobody opened', async () => {
    const hub = createChatHub({ limit: 3, load: async () => [] });
    hub.remember('elsewhere', msg('x'));
    expect(await hub.history({ type: 'group', id: 'elsewhere' })).toEqual([]);
  });
});
