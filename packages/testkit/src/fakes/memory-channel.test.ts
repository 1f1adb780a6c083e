import type { ChannelContext, InboundMessage } from '@colloquy/core';
import { isColloquyError, silentLogger } from '@colloquy/core';
import { createPairingAccess, createThreadBindingAccess } from '@colloquy/core/internal';
import { MemoryStore } from '@colloquy/core/store';
import { describe, expect, it } from 'vitest';
import { createMemoryChannel } from './memory-channel.js';

function makeContext() {
  const inbound: InboundMessage[] = [];
  const store = new MemoryStore();
  const controller = new AbortController();
  const ctx: ChannelContext = {
    async receive(message) {
      inbound.push(message);
    },
    threadBindings: createThreadBindingAccess(store, 'memory'),
    pairing: createPairingAccess(store, 'memory'),
    commands: [],
    log: silentLogger,
    signal: controller.signal,
  };
  return { ctx, inbound, store };
}

const to = { channel: 'memory', to: 'chat-1', accountId: 'default' };

describe('createMemoryChannel', () => {
  it('delivers injected messages with defaults through the start context', async () => {
    const channel = createMemoryChannel();
    const { ctx, inbound } = makeContext();
    await channel.start(ctx);
    const message = await channel.inject('hello');
    expect(message).toMatchObject({
      channel: 'memory',
      accountId: 'default',
      chat: { type: 'direct', id: 'user-1' },
      sender: { id: 'user-1' },
      text: 'hello',
      mentionsBot: true,
      messageId: 'memory-in-1',
    });
    expect(inbound).toEqual([message]);
    expect(channel.received).toEqual([message]);
  });

  it('builds inbound messages without delivering them', async () => {
    const channel = createMemoryChannel();
    const { ctx, inbound } = makeContext();
    await channel.start(ctx);
    const built = channel.toInbound({ text: 'later', chat: { type: 'group', id: 'g' } });
    expect(built).toMatchObject({ text: 'later', chat: { type: 'group', id: 'g' }, mentionsBot: false });
    expect(inbound).toEqual([]);
    expect((await channel.inject('next')).messageId).not.toBe(built.messageId);
  });

  it('marks group messages as addressed only when the bot is mentioned', async () => {
    const channel = createMemoryChannel({ botUsername: 'helper' });
    await channel.start(makeContext().ctx);
    const group = { type: 'group' as const, id: 'g1' };
    expect((await channel.inject({ text: 'hi all', chat: group })).mentionsBot).toBe(false);
    expect((await channel.inject({ text: 'hi @helper', chat: group })).mentionsBot).toBe(true);
    expect((await channel.inject({ text: 'x', chat: group, mentionsBot: true })).mentionsBot).toBe(true);
  });

  it('records sends with fresh ids and chunks long texts at maxTextLength', async () => {
    const channel = createMemoryChannel({ capabilities: { maxTextLength: 10 } });
    await channel.start(makeContext().ctx);
    const short = await channel.send(to, { text: 'hi' });
    const long = await channel.send(to, { text: 'alpha beta gamma delta' });
    expect(short).toEqual({ messageId: 'memory-out-1', messageIds: ['memory-out-1'] });
    expect(long.messageIds.length).toBeGreaterThan(1);
    expect(long.messageId).toBe(long.messageIds[0]);
    expect(new Set([...short.messageIds, ...long.messageIds]).size).toBe(1 + long.messageIds.length);
    const chunks = channel.sent.filter((m) => m.sendIndex === 1).map((m) => m.text);
    expect(chunks.every((c) => c.length <= 10)).toBe(true);
    expect(chunks.join('')).toBe('alpha beta gamma delta');
    expect(channel.textsTo('chat-1')).toEqual(['hi', ...chunks]);
  });

  it('creates threads only when capable, binds them, and routes sends into them', async () => {
    expect(createMemoryChannel().createThread).toBeUndefined();
    const channel = createMemoryChannel({ capabilities: { threads: true, threadKind: 'topic' } });
    const { ctx, store } = makeContext();
    await channel.start(ctx);
    const inThread = await channel.createThread?.({
      parent: to,
      title: 'Research',
      sessionKey: 'agent:main:subagent:1',
    });
    expect(inThread).toEqual({ ...to, threadId: 'memory-thread-1' });
    expect((await store.listThreadBindings())[0]).toMatchObject({
      threadId: 'memory-thread-1',
      sessionKey: 'agent:main:subagent:1',
      conversationId: 'chat-1',
    });
    await channel.send(inThread ?? to, { text: 'in the thread' });
    expect(channel.textsTo('chat-1', 'memory-thread-1')).toEqual(['in the thread']);
  });

  it('records typing only when the capability is on', async () => {
    expect(createMemoryChannel({ capabilities: { typing: false } }).sendTyping).toBeUndefined();
    const channel = createMemoryChannel();
    await channel.start(makeContext().ctx);
    await channel.sendTyping?.(to);
    expect(channel.typing).toEqual([to]);
  });

  it('edits and deletes sent messages only when edits are on, keeping the texts shown before', async () => {
    expect(createMemoryChannel().editMessage).toBeUndefined();
    const channel = createMemoryChannel({ capabilities: { edits: true } });
    await channel.start(makeContext().ctx);
    const { messageId } = await channel.send(to, { text: 'one' });
    await channel.editMessage?.(to, messageId, { text: 'two' });
    await channel.editMessage?.(to, messageId, { text: 'two' });
    expect(channel.sent[0]).toMatchObject({ text: 'two', previousTexts: ['one'] });
    await channel.deleteMessage?.(to, messageId);
    await channel.deleteMessage?.(to, messageId);
    expect(channel.sent[0]?.deleted).toBe(true);
    await expect(channel.editMessage?.(to, messageId, { text: 'three' })).rejects.toMatchObject({
      code: 'CHANNEL_ERROR',
    });
  });

  it('fails the next send on request, then sends again', async () => {
    const channel = createMemoryChannel();
    await channel.start(makeContext().ctx);
    channel.failNextSend();
    await expect(channel.send(to, { text: 'x' })).rejects.toMatchObject({ code: 'CHANNEL_ERROR' });
    expect(channel.sent).toHaveLength(0);
    await channel.send(to, { text: 'y' });
    expect(channel.sent).toHaveLength(1);
  });

  it('refuses to send or inject after stop, and stop is idempotent', async () => {
    const channel = createMemoryChannel();
    await channel.start(makeContext().ctx);
    await channel.stop();
    await channel.stop();
    expect(channel.running).toBe(false);
    expect(channel.status?.().state).toBe('disconnected');
    const error = await channel.send(to, { text: 'x' }).catch((e: unknown) => e);
    expect(isColloquyError(error) && error.code).toBe('CHANNEL_ERROR');
    await expect(channel.inject('late')).rejects.toThrow('not running');
  });

  it('waits for sends', async () => {
    const channel = createMemoryChannel();
    await channel.start(makeContext().ctx);
    const waiting = channel.waitForSent(2);
    await channel.send(to, { text: 'a' });
    await channel.send(to, { text: 'b' });
    expect((await waiting).map((m) => m.text)).toEqual(['a', 'b']);
    await expect(channel.waitForSent(3, 20)).rejects.toThrow('2 of 3');
  });
});
