import { type InboundMessage, resolveConfig } from '@colloquy/core';
import { describe, expect, it } from 'vitest';
import { createGroupContextWindow, formatGroupContext, GROUP_CONTEXT_HEADER } from './group-context.js';

const KEY = 'agent:main:memory:group:g1';
const OTHER = 'agent:main:memory:group:g2';

const group = (text: string, chatId = 'g1', name = 'Ada'): InboundMessage => ({
  channel: 'memory',
  accountId: 'default',
  chat: { type: 'group', id: chatId },
  sender: { id: `u-${name}`, name },
  text,
  mentionsBot: false,
  messageId: `m-${text}`,
});

const windowWith = (groupContext: Record<string, unknown> = {}, maxGroups?: number) =>
  createGroupContextWindow({
    config: resolveConfig({ session: { groupContext } }).session.groupContext,
    ...(maxGroups === undefined ? {} : { maxGroups }),
  });

describe('group context window', () => {
  it('keeps the newest maxMessages per group, oldest first, and empties on take', () => {
    const window = windowWith({ maxMessages: 2 });
    for (const text of ['one', 'two', 'three']) window.record(KEY, group(text), 1000);
    expect(window.take(KEY, 1000).map((e) => e.text)).toEqual(['two', 'three']);
    expect(window.take(KEY, 1000)).toEqual([]);
  });

  it('never mixes groups', () => {
    const window = windowWith();
    window.record(KEY, group('in g1'), 0);
    window.record(OTHER, group('in g2', 'g2'), 0);
    expect(window.take(KEY, 0).map((e) => e.text)).toEqual(['in g1']);
    expect(window.take(OTHER, 0).map((e) => e.text)).toEqual(['in g2']);
  });

  it('drops messages older than maxAgeMinutes', () => {
    const window = windowWith({ maxAgeMinutes: 1 });
    window.record(KEY, group('old'), 0);
    window.record(KEY, group('new'), 50_000);
    expect(window.take(KEY, 70_000).map((e) => e.text)).toEqual(['new']);
  });

  it('cuts long messages and bounds the number of groups, dropping the least recently written', () => {
    const window = windowWith({ maxCharsPerMessage: 16 }, 2);
    window.record('a', group('x'.repeat(40)), 0);
    window.record('b', group('b'), 0);
    window.record('a', group('again'), 0);
    window.record('c', group('c'), 0);
    expect(window.size).toBe(2);
    expect(window.take('b', 0)).toEqual([]);
    expect(window.take('a', 0).map((e) => e.text)).toEqual([`${'x'.repeat(16)}…`, 'again']);
  });

  it('accepts only groups that are enabled and not excluded', () => {
    expect(windowWith({ enabled: false }).accepts(group('hi'), KEY)).toBe(false);
    const window = windowWith({
      exclude: [{ channel: 'memory', chatId: 'g2' }, { keyPrefix: 'agent:ops:' }],
    });
    expect(window.accepts(group('hi'), KEY)).toBe(true);
    expect(window.accepts(group('hi', 'g2'), OTHER)).toBe(false);
    expect(window.accepts(group('hi'), 'agent:ops:memory:group:g1')).toBe(false);
    expect(window.accepts({ ...group('hi'), chat: { type: 'direct', id: 'u' } }, KEY)).toBe(false);
  });

  it('renders one block headed as not addressed to the model', () => {
    expect(formatGroupContext([{ sender: 'Ada', text: 'lunch?', at: 0 }])).toBe(
      `${GROUP_CONTEXT_HEADER}\nAda: lunch?`,
    );
    expect(GROUP_CONTEXT_HEADER).toContain('not addressed to you');
  });
});
