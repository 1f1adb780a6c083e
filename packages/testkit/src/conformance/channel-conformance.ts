import type { DmScope } from '@colloquy/core';
import {
  type ChannelCapabilities,
  type ChatType,
  type DeliveryContext,
  deriveSessionKey,
  type InboundMessage,
  type SessionKeyInput,
} from '@colloquy/core';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type {
  ChannelConformanceFixture,
  ChannelConformanceOptions,
  ConformanceInbound,
  ConformancePeer,
  PlatformSentMessage,
} from './fixture.js';
import { runGroupContextConformance } from './group-context.js';
import { createRecordingChannelContext, type RecordingChannelContext } from './recording-context.js';
import { runThreadBoundSubagentConformance } from './thread-bound-subagent.js';

/**
 * The session-key input for an inbound message: direct chats are keyed by the sender, groups and
 * channels by the chat, threads by the thread id with the channel's `threadKind`.
 *
 * @param inbound - the normalised inbound message
 * @param agentId - the agent that answers it
 * @param threadKind - `capabilities.threadKind` of the plugin (default `thread`)
 */
export function sessionKeyInputFromInbound(
  inbound: InboundMessage,
  agentId: string,
  threadKind: 'thread' | 'topic' = 'thread',
): SessionKeyInput {
  return {
    agentId,
    channel: inbound.channel,
    accountId: inbound.accountId,
    chatType: inbound.chat.type,
    peerId: inbound.chat.type === 'direct' ? inbound.sender.id : inbound.chat.id,
    ...(inbound.threadId !== undefined ? { threadId: inbound.threadId, threadKind } : {}),
  };
}

/** A platform id as a session key segment: `%` and `:` percent-encoded (fixture ids hold no control characters). */
function keyId(id: string): string {
  return id.trim().replace(/[%:]/g, (c) => (c === '%' ? '%25' : '%3A'));
}

const DM_SCOPES: readonly DmScope[] = ['per-channel-peer', 'per-peer', 'per-account-channel-peer', 'main'];
const CHAT_TYPES: readonly ChatType[] = ['direct', 'group', 'channel'];
const MARKDOWN: readonly string[] = [
  'commonmark',
  'telegram-html',
  'discord',
  'whatsapp',
  'slack-mrkdwn',
  'plain',
];
const STATES: readonly string[] = [
  'starting',
  'connected',
  'reconnecting',
  'disconnected',
  'logged-out',
  'error',
];

/** Words of a long plain text, so chunk boundaries can be checked without markdown conversion. */
function longText(minLength: number): { text: string; words: string[] } {
  const words: string[] = [];
  let length = 0;
  for (let i = 0; length < minLength; i++) {
    const word = `w${i.toString(36)}`;
    words.push(word);
    length += word.length + 1;
  }
  return { text: words.join(' '), words };
}

/**
 * Registers the channel plugin conformance suite (vitest). Every Colloquy channel plugin runs it
 * against its own fake platform: inbound normalisation, session keys per `dmScope`, outbound ids and
 * chunking, edits and deletes (with `capabilities.edits`), thread binding, a clean `stop()`, and (through the real runtime) a thread-bound sub-agent
 * that answers in its thread while its parent answers the result in its own chat.
 *
 * @param name - shown in the suite title, e.g. `telegram`
 * @param setup - builds a fresh fixture (plugin + fake platform) for each test; see {@link ChannelConformanceFixture}
 * @param options - timeouts and the agent id; see {@link ChannelConformanceOptions}
 * @example
 * A condensed form of the Telegram plugin's own fixture (`plugins/telegram/test/conformance.test.ts`
 * has it whole, with the group and thread cases):
 * ```ts
 * import { runChannelPluginConformance } from '@colloquy/testkit/conformance';
 * import { FakeTelegram } from '@colloquy/testkit/telegram-fake';
 * import { createTelegramPlugin } from '@colloquy/plugin-telegram';
 *
 * const TOKEN = '2002:conformance-token';
 *
 * runChannelPluginConformance('telegram', async () => {
 *   const fake = await FakeTelegram.start();
 *   fake.addBot(TOKEN, { id: 2002, username: 'conformance_bot' });
 *   fake.addChat('101', { type: 'private' });
 *   fake.addChat('102', { type: 'private' });
 *   return {
 *     plugin: createTelegramPlugin({
 *       config: { accounts: [{ token: TOKEN }], dmPolicy: 'open' },
 *       apiRoot: fake.apiRoot,
 *     }),
 *     accountId: 'default',
 *     peers: [{ id: '101' }, { id: '102' }],
 *     chats: {},
 *     sendTarget: { channel: 'telegram', to: '101', accountId: 'default' },
 *     async inject(m) {
 *       const chat = { id: Number(m.sender.id), type: 'private' as const, first_name: 'Ada' };
 *       const from = { id: Number(m.sender.id), is_bot: false, first_name: 'Ada' };
 *       const { message } = fake.pushMessage(TOKEN, { chat, from, text: m.text });
 *       return { messageId: String(message.message_id) };
 *     },
 *     readSent: () => fake.sent.map((s) => ({ messageId: String(s.messageId), chatId: s.chatId, text: s.text })),
 *     isReleased: () => !fake.hasPendingPoll(TOKEN),
 *     cleanup: () => fake.close(),
 *   };
 * });
 * ```
 */
export function runChannelPluginConformance(
  name: string,
  setup: () => ChannelConformanceFixture | Promise<ChannelConformanceFixture>,
  options: ChannelConformanceOptions = {},
): void {
  const inboundTimeoutMs = options.inboundTimeoutMs ?? 5000;
  const releaseTimeoutMs = options.releaseTimeoutMs ?? 5000;
  const quietPeriodMs = options.quietPeriodMs ?? 300;
  const agentId = options.agentId ?? 'main';

  describe(`channel plugin conformance: ${name}`, () => {
    let fixture: ChannelConformanceFixture;
    let ctx: RecordingChannelContext;
    let caps: ChannelCapabilities;
    let stopped = false;

    beforeEach(async () => {
      fixture = await setup();
      caps = fixture.plugin.capabilities;
      ctx = createRecordingChannelContext({ channel: fixture.plugin.id });
      stopped = false;
      await fixture.plugin.start(ctx);
      await fixture.ready?.();
    });

    afterEach(async () => {
      try {
        if (!stopped) await fixture.plugin.stop();
      } finally {
        ctx.abort();
        await fixture.cleanup?.();
      }
    });

    /** Injects a message and returns what reached `ctx.receive` for it. */
    async function deliver(message: ConformanceInbound) {
      const index = ctx.inbound.length;
      const injected = await fixture.inject(message);
      const inbound = await ctx.waitForInbound(index, inboundTimeoutMs);
      return { inbound, injected };
    }

    /** The platform's current view of one message the plugin sent. */
    async function readSentMessage(messageId: string): Promise<PlatformSentMessage | undefined> {
      return (await fixture.readSent()).find((m) => m.messageId === messageId);
    }

    const peer = (i: 0 | 1): ConformancePeer => fixture.peers[i];
    const dm = (sender: ConformancePeer, text: string): ConformanceInbound => ({
      chatType: 'direct',
      sender,
      text,
      mentionBot: false,
    });
    const nonDirectChats = () =>
      (Object.entries(fixture.chats) as [Exclude<ChatType, 'direct'>, string | undefined][]).filter(
        (entry): entry is [Exclude<ChatType, 'direct'>, string] => typeof entry[1] === 'string',
      );

    describe('capabilities', () => {
      it('declares a usable id and capability set', () => {
        expect(fixture.plugin.id).toMatch(/^[a-z][a-z0-9_-]*$/);
        expect(Number.isInteger(caps.maxTextLength) && caps.maxTextLength > 0).toBe(true);
        expect(MARKDOWN).toContain(caps.markdown);
        for (const flag of ['threads', 'edits', 'reactions', 'media', 'typing'] as const) {
          expect(typeof caps[flag], `capabilities.${flag}`).toBe('boolean');
        }
      });

      it('offers createThread exactly when it declares threads, and sendTyping when it declares typing', () => {
        expect(
          typeof fixture.plugin.createThread === 'function',
          'createThread vs capabilities.threads',
        ).toBe(caps.threads);
        if (caps.threads) {
          expect(['thread', 'topic']).toContain(caps.threadKind);
          expect(fixture.threadParent, 'fixture.threadParent is needed to test threads').toBeDefined();
        }
        if (caps.typing) expect(typeof fixture.plugin.sendTyping).toBe('function');
      });

      it('offers editMessage and deleteMessage exactly when it declares edits', () => {
        expect(typeof fixture.plugin.editMessage === 'function', 'editMessage vs capabilities.edits').toBe(
          caps.edits,
        );
        expect(
          typeof fixture.plugin.deleteMessage === 'function',
          'deleteMessage vs capabilities.edits',
        ).toBe(caps.edits);
      });

      it('reports a known status state when it has status()', (test) => {
        if (!fixture.plugin.status) test.skip('no status()');
        if (!fixture.plugin.status) return;
        expect(STATES).toContain(fixture.plugin.status().state);
      });
    });

    describe('inbound normalisation', () => {
      it('normalises a direct message: channel, account, chat, sender, text, messageId, addressed', async () => {
        const { inbound, injected } = await deliver(dm(peer(0), 'hello from a direct chat'));
        expect(inbound.channel).toBe(fixture.plugin.id);
        expect(inbound.accountId).toBe(fixture.accountId);
        expect(inbound.chat.type).toBe('direct');
        expect(typeof inbound.chat.id === 'string' && inbound.chat.id.length > 0).toBe(true);
        expect(inbound.sender.id).toBe(peer(0).id);
        expect(inbound.text).toContain('hello from a direct chat');
        expect(inbound.mentionsBot, 'direct messages always address the bot').toBe(true);
        expect(typeof inbound.messageId === 'string' && inbound.messageId.length > 0).toBe(true);
        if (injected?.messageId !== undefined) expect(inbound.messageId).toBe(injected.messageId);
        expect(inbound.threadId).toBeUndefined();
        if (inbound.timestamp !== undefined) {
          expect(Math.abs(inbound.timestamp - Date.now())).toBeLessThan(24 * 3600 * 1000);
        }
      });

      it('gives every inbound message its own messageId', async () => {
        const first = await deliver(dm(peer(0), 'one'));
        const second = await deliver(dm(peer(0), 'two'));
        expect(first.inbound.messageId).not.toBe(second.inbound.messageId);
      });

      it('keeps the chat type and id of group and channel messages', async (test) => {
        if (nonDirectChats().length === 0) test.skip('fixture.chats lists no group or channel');
        for (const [chatType, chatId] of nonDirectChats()) {
          expect(CHAT_TYPES).toContain(chatType);
          const { inbound } = await deliver({
            chatType,
            chatId,
            sender: peer(1),
            text: `in a ${chatType}`,
            mentionBot: true,
          });
          expect(inbound.chat).toMatchObject({ type: chatType, id: chatId });
          expect(inbound.sender.id).toBe(peer(1).id);
          expect(inbound.text).toContain(`in a ${chatType}`);
        }
      });

      it('sets mentionsBot only when a group or channel message addresses the bot', async (test) => {
        if (nonDirectChats().length === 0) test.skip('fixture.chats lists no group or channel');
        for (const [chatType, chatId] of nonDirectChats()) {
          const plain = await deliver({
            chatType,
            chatId,
            sender: peer(0),
            text: 'just chatting',
            mentionBot: false,
          });
          expect(plain.inbound.mentionsBot, `${chatType} without a mention`).toBe(false);
          const addressed = await deliver({
            chatType,
            chatId,
            sender: peer(0),
            text: 'over to you',
            mentionBot: true,
          });
          expect(addressed.inbound.mentionsBot, `${chatType} with a mention`).toBe(true);
        }
      });
    });

    describe('session keys (core deriveSessionKey on the normalised inbound)', () => {
      it('keys direct chats by peer for every dmScope: stable per peer, distinct across peers', async () => {
        const a1 = (await deliver(dm(peer(0), 'first'))).inbound;
        const a2 = (await deliver(dm(peer(0), 'second'))).inbound;
        const b = (await deliver(dm(peer(1), 'other peer'))).inbound;
        for (const dmScope of DM_SCOPES) {
          const key = (m: InboundMessage) =>
            deriveSessionKey(sessionKeyInputFromInbound(m, agentId, caps.threadKind), {
              dmScope,
              mainKey: 'main',
            });
          expect(key(a1), `${dmScope}: same peer, same key`).toBe(key(a2));
          if (dmScope === 'main') expect(key(a1)).toBe(key(b));
          else expect(key(a1), `${dmScope}: other peer, other key`).not.toBe(key(b));
        }
        // The keys spelled out (channel = plugin id, peer = sender id), not derived the way the plugin does.
        const [agent, channel, account, sender] = [
          agentId.toLowerCase(),
          fixture.plugin.id.toLowerCase(),
          keyId(fixture.accountId),
          keyId(peer(0).id),
        ];
        const expected: Record<DmScope, string> = {
          main: `agent:${agent}:main`,
          'per-peer': `agent:${agent}:dm:${sender}`,
          'per-channel-peer': `agent:${agent}:${channel}:dm:${sender}`,
          'per-account-channel-peer': `agent:${agent}:${channel}:${account}:dm:${sender}`,
        };
        for (const dmScope of DM_SCOPES) {
          expect(
            deriveSessionKey(sessionKeyInputFromInbound(a1, agentId, caps.threadKind), {
              dmScope,
              mainKey: 'main',
            }),
            `the ${dmScope} key of the platform identity`,
          ).toBe(expected[dmScope]);
        }
      });

      it('keys group and channel chats by chat, whoever speaks', async (test) => {
        if (nonDirectChats().length === 0) test.skip('fixture.chats lists no group or channel');
        for (const [chatType, chatId] of nonDirectChats()) {
          const fromA = (await deliver({ chatType, chatId, sender: peer(0), text: 'a', mentionBot: true }))
            .inbound;
          const fromB = (await deliver({ chatType, chatId, sender: peer(1), text: 'b', mentionBot: true }))
            .inbound;
          const key = (m: InboundMessage) =>
            deriveSessionKey(sessionKeyInputFromInbound(m, agentId), {
              dmScope: 'per-channel-peer',
              mainKey: 'main',
            });
          expect(key(fromA)).toBe(key(fromB));
          expect(key(fromA), 'the key of the platform chat').toBe(
            `agent:${agentId.toLowerCase()}:${fixture.plugin.id.toLowerCase()}:${chatType}:${keyId(chatId)}`,
          );
        }
      });
    });

    describe('outbound', () => {
      it('sends a message and returns the platform message id', async () => {
        const before = (await fixture.readSent()).length;
        const result = await fixture.plugin.send(fixture.sendTarget, {
          text: 'plain outbound text',
          format: 'plain',
        });
        expect(typeof result.messageId === 'string' && result.messageId.length > 0).toBe(true);
        expect(result.messageIds).toEqual([result.messageId]);
        const sent = (await fixture.readSent()).slice(before);
        expect(sent).toHaveLength(1);
        expect(sent[0]).toMatchObject({ messageId: result.messageId, chatId: fixture.sendTarget.to });
        expect(sent[0]?.text).toContain('plain outbound text');
      });

      it('chunks text longer than maxTextLength and returns an id per chunk', async () => {
        const { text, words } = longText(Math.floor(caps.maxTextLength * 2.5));
        const before = (await fixture.readSent()).length;
        const result = await fixture.plugin.send(fixture.sendTarget, { text, format: 'plain' });
        const sent: readonly PlatformSentMessage[] = (await fixture.readSent()).slice(before);
        expect(result.messageIds.length).toBeGreaterThanOrEqual(3);
        expect(result.messageIds.length, 'no needlessly small chunks').toBeLessThanOrEqual(6);
        expect(result.messageId).toBe(result.messageIds[0]);
        expect(new Set(result.messageIds).size).toBe(result.messageIds.length);
        expect(sent.map((m) => m.messageId)).toEqual(result.messageIds);
        for (const chunk of sent) {
          expect(chunk.text.length, 'chunk within maxTextLength').toBeLessThanOrEqual(caps.maxTextLength);
          expect(chunk.chatId).toBe(fixture.sendTarget.to);
        }
        const received = sent
          .map((m) => m.text)
          .join(' ')
          .split(/\s+/)
          .filter((w) => w.length > 0);
        expect(received, 'every word arrives once, in order').toEqual(words);
      });

      it('edits a sent message in place when it declares edits', async (test) => {
        if (!caps.edits || !fixture.plugin.editMessage) test.skip('capabilities.edits is false');
        if (!fixture.plugin.editMessage) return;
        const sent = await fixture.plugin.send(fixture.sendTarget, { text: 'status: first version' });
        await fixture.plugin.editMessage(fixture.sendTarget, sent.messageId, {
          text: 'status: second version',
        });
        const edited = await readSentMessage(sent.messageId);
        expect(edited?.text).toContain('second version');
        expect(edited?.text).not.toContain('first version');
        // The same text again is not an error: a throttled status line may repeat itself.
        await expect(
          fixture.plugin.editMessage(fixture.sendTarget, sent.messageId, { text: 'status: second version' }),
        ).resolves.toBeUndefined();
      });

      it('deletes a sent message, and a second delete or a late edit of it is handled', async (test) => {
        if (!caps.edits || !fixture.plugin.deleteMessage || !fixture.plugin.editMessage) {
          test.skip('capabilities.edits is false');
        }
        if (!fixture.plugin.deleteMessage || !fixture.plugin.editMessage) return;
        const sent = await fixture.plugin.send(fixture.sendTarget, { text: 'status: to be removed' });
        await fixture.plugin.deleteMessage(fixture.sendTarget, sent.messageId);
        const removed = await readSentMessage(sent.messageId);
        expect(removed === undefined || removed.deleted === true, 'the message is gone').toBe(true);
        await expect(
          fixture.plugin.deleteMessage(fixture.sendTarget, sent.messageId),
        ).resolves.toBeUndefined();
        const late = fixture.plugin.editMessage(fixture.sendTarget, sent.messageId, { text: 'too late' });
        await expect(late).rejects.toMatchObject({ code: 'CHANNEL_ERROR' });
      });

      it('shows typing without error when it can', async (test) => {
        if (!caps.typing || !fixture.plugin.sendTyping) test.skip('capabilities.typing is false');
        if (!fixture.plugin.sendTyping) return;
        await expect(fixture.plugin.sendTyping(fixture.sendTarget)).resolves.toBeUndefined();
      });
    });

    describe('threads', () => {
      it('creates a thread, routes a bound message into it, and reports inbound thread messages', async (test) => {
        if (!caps.threads) test.skip('capabilities.threads is false');
        if (!fixture.plugin.createThread || !fixture.threadParent) {
          throw new Error(
            'capabilities.threads is true: provide plugin.createThread and fixture.threadParent',
          );
        }
        const parent = fixture.threadParent.to;
        const created = await fixture.plugin.createThread({
          parent,
          title: 'Conformance thread',
          sessionKey: `agent:${agentId}:subagent:conformance`,
        });
        expect(typeof created.threadId === 'string' && created.threadId.length > 0).toBe(true);
        expect(created).toMatchObject({ channel: parent.channel, accountId: parent.accountId });

        const target: DeliveryContext = { ...created };
        const before = (await fixture.readSent()).length;
        const result = await fixture.plugin.send(target, { text: 'inside the thread', format: 'plain' });
        const sent = (await fixture.readSent()).slice(before);
        const landed = sent.find((m) => m.messageId === result.messageId);
        expect(landed, 'the bound message reached the platform').toBeDefined();
        expect(landed?.threadId ?? landed?.chatId, 'the bound message went to the thread').toBe(
          created.threadId,
        );

        const { inbound } = await deliver({
          chatType: fixture.threadParent.chatType,
          chatId: parent.to,
          threadId: created.threadId,
          sender: peer(0),
          text: 'reply in thread',
          mentionBot: true,
        });
        expect(inbound.threadId).toBe(created.threadId);
        const key = deriveSessionKey(sessionKeyInputFromInbound(inbound, agentId, caps.threadKind), {
          dmScope: 'per-channel-peer',
          mainKey: 'main',
        });
        const parentKey = `agent:${agentId.toLowerCase()}:${fixture.plugin.id.toLowerCase()}:${fixture.threadParent.chatType}:${keyId(parent.to)}`;
        expect(key, 'the thread has its own session, not the parent chat').toBe(
          `${parentKey}:${caps.threadKind ?? 'thread'}:${keyId(created.threadId!)}`,
        );
      });
    });

    describe('stop', () => {
      it('releases every platform resource, is idempotent, and delivers nothing afterwards', async () => {
        await deliver(dm(peer(0), 'before stop'));
        await fixture.plugin.stop();
        await fixture.plugin.stop();
        stopped = true;
        if (fixture.isReleased) {
          const deadline = Date.now() + releaseTimeoutMs;
          let released = await fixture.isReleased();
          while (!released && Date.now() < deadline) {
            await new Promise((resolve) => setTimeout(resolve, 25));
            released = await fixture.isReleased();
          }
          expect(
            released,
            `the fake platform still sees the plugin ${releaseTimeoutMs} ms after stop()`,
          ).toBe(true);
        }
        const count = ctx.inbound.length;
        await fixture.inject(dm(peer(0), 'after stop'));
        await new Promise((resolve) => setTimeout(resolve, quietPeriodMs));
        expect(ctx.inbound.length, 'no message reaches the runtime after stop()').toBe(count);
      });
    });
  });
  runThreadBoundSubagentConformance(name, setup, options);
  runGroupContextConformance(name, setup, options);
}
