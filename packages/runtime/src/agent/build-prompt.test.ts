import type { TranscriptMessage } from '@colloquy/core';
import { MemoryStore } from '@colloquy/core/store';
import { describe, expect, it } from 'vitest';
import {
  buildSystemPrompt,
  DEFAULT_SYSTEM_PROMPT,
  estimateMessageTokens,
  estimateTokens,
  loadHistory,
  toModelMessages,
} from './build-prompt.js';

const KEY = 'agent:main:main';

async function storeWith(messages: TranscriptMessage[]): Promise<MemoryStore> {
  const store = new MemoryStore();
  await store.putSession({
    key: KEY,
    sessionId: 's',
    agentId: 'main',
    kind: 'main',
    createdAt: 0,
    updatedAt: 0,
  });
  await store.appendMessages(KEY, messages);
  return store;
}

const user = (content: string): TranscriptMessage => ({ role: 'user', content, timestamp: 0 });

describe('loadHistory', () => {
  it('keeps the newest messages that fit the budget, in order, reading page by page', async () => {
    const store = await storeWith(
      Array.from({ length: 300 }, (_, i) => user(`message ${i} ${'x'.repeat(36)}`)),
    );
    // Every message costs the same: message 284 to 299 have three digits.
    const cost = estimateMessageTokens(user(`message 299 ${'x'.repeat(36)}`));
    const picked = await loadHistory(store, KEY, 16 * cost, { pageSize: 8 });
    expect(picked.length).toBe(16);
    expect(picked.at(-1)?.content).toContain('message 299');
    expect(picked[0]?.content).toContain('message 284');
  });

  it('always includes the newest message, even over budget', async () => {
    const store = await storeWith([user('old'), user('y'.repeat(4000))]);
    expect((await loadHistory(store, KEY, 10)).map((m) => m.content)).toEqual(['y'.repeat(4000)]);
  });
});

describe('toModelMessages', () => {
  it('drops orphan tool results and answers dangling tool calls with an error result', async () => {
    const messages = toModelMessages([
      { role: 'toolResult', content: 'orphan', toolCallId: 'x', toolName: 't', timestamp: 0 },
      user('go'),
      {
        role: 'assistant',
        content: [{ type: 'toolCall', id: 'c1', name: 'search', arguments: {} }],
        timestamp: 0,
      },
      user('are you there?'),
    ]);
    expect(messages.map((m) => m.role)).toEqual(['user', 'assistant', 'toolResult', 'user']);
    expect(messages[2]).toMatchObject({ toolCallId: 'c1', toolName: 'search', isError: true });
  });

  it('marks messages that did not come from the human', async () => {
    const [message] = toModelMessages([
      {
        role: 'user',
        content: 'ping',
        timestamp: 0,
        provenance: {
          kind: 'inter_session',
          sourceSessionKey: 'agent:main:other',
          sourceTool: 'sessions_send',
        },
      },
    ]);
    expect(message?.content).toBe(
      '[Message from session agent:main:other via sessions_send; it is not from the human user]\nping',
    );
  });
});

describe('buildSystemPrompt and estimateTokens', () => {
  it('joins the base prompt with distinct extras, with a default base', async () => {
    expect(buildSystemPrompt(undefined, ['A', 'A', undefined, ' B '])).toBe(
      `${DEFAULT_SYSTEM_PROMPT}\n\nA\n\nB`,
    );
    expect(estimateTokens('abcde')).toBe(1);
    expect(estimateTokens('中文')).toBe(2);
  });
});

describe('toModelMessages with group context', () => {
  it('puts one block of the group messages before the addressed message, marked as not addressed', () => {
    const addressed: TranscriptMessage = {
      ...user('@bot what do you think?'),
      details: { groupContext: [{ sender: 'Ada', text: 'shall we ship friday?', at: 0 }] },
    };
    const out = toModelMessages([addressed]);
    expect(out).toHaveLength(2);
    expect(out[0]).toEqual({
      role: 'user',
      content:
        'Recent messages in this group, not addressed to you (context only):\nAda: shall we ship friday?',
    });
    expect(out[1]).toEqual({ role: 'user', content: '@bot what do you think?' });
  });

  it('counts the group context in the token estimate', () => {
    const plain = user('hi');
    const withContext = {
      ...plain,
      details: { groupContext: [{ sender: 'A', text: 'word '.repeat(100), at: 0 }] },
    };
    expect(estimateMessageTokens(withContext)).toBeGreaterThan(estimateMessageTokens(plain) + 100);
  });
});
