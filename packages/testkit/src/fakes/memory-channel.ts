import type {
  ChannelCapabilities,
  ChannelContext,
  ChannelPlugin,
  ChannelStatus,
  ChatType,
  DeliveryContext,
  InboundMessage,
  OutboundMessage,
  SendResult,
  ThreadRequest,
} from '@colloquy/core';
import { ColloquyError } from '@colloquy/core';
import { waitForCount } from './wait-for-count.js';

/** Options of `createMemoryChannel`. */
export interface MemoryChannelOptions {
  /** The plugin id (the `channel` of its sessions). Default `memory`. */
  id?: string;
  /** The bot account. Default `default`. */
  accountId?: string;
  /** The bot's user name; `@<botUsername>` in a group message sets `mentionsBot`. Default `colloquy_bot`. */
  botUsername?: string;
  /**
   * Capabilities. Defaults: no threads, `threadKind: 'thread'`, no edits/reactions/media, typing on,
   * `maxTextLength: 4000`, `markdown: 'commonmark'`. With `threads: true` the channel has `createThread`;
   * with `typing: false` it has no `sendTyping`; with `edits: true` it has `editMessage` and
   * `deleteMessage`.
   */
  capabilities?: Partial<ChannelCapabilities>;
}

/** One platform message the channel "sent" (one per chunk). */
export interface SentMessage {
  /** The generated platform message id (`<id>-out-<n>`). */
  messageId: string;
  /** Where it was sent. */
  to: DeliveryContext;
  /** The chunk's text. */
  text: string;
  /** 0-based chunk index within its `send` call. */
  chunk: number;
  /** The outbound message this chunk belongs to. */
  message: OutboundMessage;
  /** 0-based index of the `send` call. */
  sendIndex: number;
  /** Epoch milliseconds it was sent. */
  at: number;
  /** The texts it showed before each `editMessage`, oldest first (`text` is the latest). */
  previousTexts?: string[];
  /** Set once `deleteMessage` removed it. */
  deleted?: true;
}

/** A thread created with `createThread`. */
export interface MemoryThread {
  /** The thread id the channel generated. */
  threadId: string;
  /** The chat that holds the thread. */
  parent: DeliveryContext;
  /** The title given to `createThread`. */
  title: string;
  /** The session the thread was created for. */
  sessionKey: string;
}

/** What a test passes to `inject`: the text and whatever it wants to set; the rest gets defaults. */
export interface InjectInput {
  /** The message text. */
  text: string;
  /** Default `{ type: 'direct', id: <sender.id> }`. */
  chat?: { type: ChatType; id: string; title?: string };
  /** Default `{ id: 'user-1', name: 'User One' }`. */
  sender?: InboundMessage['sender'];
  /** A thread or topic inside the chat. */
  threadId?: string;
  /** Default: true in direct chats, else whether the text contains `@<botUsername>`. */
  mentionsBot?: boolean;
  /** Default a generated `<id>-in-<n>`. */
  messageId?: string;
  /** The platform id of the message this one replies to. */
  replyToMessageId?: string;
  /** Media attached to the message. */
  media?: InboundMessage['media'];
  /** Epoch milliseconds. Default now. */
  timestamp?: number;
  /** The bot account that receives it. Default the channel's account. */
  accountId?: string;
}

/** The in-memory channel: a `ChannelPlugin` plus the fake platform's side for tests. */
export interface MemoryChannel extends ChannelPlugin {
  /** Every platform message sent, one per chunk, oldest first. */
  readonly sent: readonly SentMessage[];
  /** Every `sendTyping` target, oldest first. */
  readonly typing: readonly DeliveryContext[];
  /** Threads created, oldest first. */
  readonly threads: readonly MemoryThread[];
  /** Inbound messages delivered to the runtime, oldest first. */
  readonly received: readonly InboundMessage[];
  /** The context given to `start`, until `stop`. */
  readonly context: ChannelContext | undefined;
  /** Whether the channel is started (and not stopped). */
  readonly running: boolean;
  /**
   * Makes the "platform" deliver an inbound message: fills defaults, hands it to `ctx.receive` and
   * resolves with the normalised message once the runtime accepted it.
   * @throws ColloquyError `CHANNEL_ERROR` when the channel is not started
   */
  inject(input: InjectInput | string): Promise<InboundMessage>;
  /**
   * Builds the normalised inbound message `inject` would deliver (defaults filled, a fresh message id)
   * without delivering it: for harnesses that hand it to the runtime themselves.
   */
  toInbound(input: InjectInput | string): InboundMessage;
  /** Makes the next `send` fail with `error` (default a `CHANNEL_ERROR`), without sending anything. */
  failNextSend(error?: Error): void;
  /** Resolves once at least `count` messages were sent; rejects after `timeoutMs` (default 5000). */
  waitForSent(count: number, timeoutMs?: number): Promise<readonly SentMessage[]>;
  /** Texts sent to a chat (all chunks in order), optionally only inside one thread. */
  textsTo(to: string, threadId?: string): string[];
  /** Forgets everything recorded (sent, typing, threads, received). */
  clear(): void;
}

const DEFAULT_CAPABILITIES: ChannelCapabilities = {
  threads: false,
  threadKind: 'thread',
  edits: false,
  reactions: false,
  media: false,
  typing: true,
  maxTextLength: 4000,
  markdown: 'commonmark',
};

/**
 * Creates an in-memory chat channel: the runtime sees a real `ChannelPlugin`, and the test plays the
 * platform (`inject` an inbound message, read `sent`). Sends get generated message ids, long texts are
 * chunked at `capabilities.maxTextLength`, threads and typing follow the capability options. It never
 * imports vitest and works in any test runner.
 *
 * @param options - see {@link MemoryChannelOptions}
 * @returns the channel; `send` throws `CHANNEL_ERROR` before `start` or after `stop`
 * @example
 * ```ts
 * const channel = createMemoryChannel({ capabilities: { threads: true } });
 * // ... start a runtime with channels: [channel] ...
 * await channel.inject({ text: 'hello', chat: { type: 'group', id: 'g1' }, mentionsBot: true });
 * const [reply] = await channel.waitForSent(1);
 * ```
 */
export function createMemoryChannel(options: MemoryChannelOptions = {}): MemoryChannel {
  const id = options.id ?? 'memory';
  const accountId = options.accountId ?? 'default';
  const botUsername = options.botUsername ?? 'colloquy_bot';
  const capabilities: ChannelCapabilities = { ...DEFAULT_CAPABILITIES, ...options.capabilities };
  const sent: SentMessage[] = [];
  const typing: DeliveryContext[] = [];
  const threads: MemoryThread[] = [];
  const received: InboundMessage[] = [];
  const waiters = new Set<() => void>();
  let context: ChannelContext | undefined;
  let failure: Error | undefined;
  let inCounter = 0;
  let outCounter = 0;
  let threadCounter = 0;
  let sendCounter = 0;

  const requireRunning = (what: string): ChannelContext => {
    if (!context) {
      throw new ColloquyError(
        'CHANNEL_ERROR',
        `Memory channel "${id}" is not running; call start(ctx) before ${what}.`,
        { channel: id },
      );
    }
    return context;
  };

  const plugin: MemoryChannel = {
    id,
    capabilities,
    get sent() {
      return sent;
    },
    get typing() {
      return typing;
    },
    get threads() {
      return threads;
    },
    get received() {
      return received;
    },
    get context() {
      return context;
    },
    get running() {
      return context !== undefined;
    },

    async start(ctx) {
      context = ctx;
    },

    async stop() {
      context = undefined;
    },

    async send(to, message) {
      requireRunning('send');
      if (failure) {
        const error = failure;
        failure = undefined;
        throw error;
      }
      const sendIndex = sendCounter++;
      const messageIds: string[] = [];
      const at = Date.now();
      chunkText(message.text, capabilities.maxTextLength).forEach((text, chunk) => {
        const messageId = `${id}-out-${++outCounter}`;
        messageIds.push(messageId);
        sent.push({ messageId, to: { ...to }, text, chunk, message, sendIndex, at });
      });
      for (const wake of waiters) wake();
      const result: SendResult = { messageId: messageIds[0] as string, messageIds };
      return result;
    },

    async inject(input) {
      const ctx = requireRunning('inject');
      const inbound = plugin.toInbound(input);
      received.push(inbound);
      await ctx.receive(inbound);
      return inbound;
    },

    toInbound(input) {
      const given: InjectInput = typeof input === 'string' ? { text: input } : input;
      const sender = given.sender ?? { id: 'user-1', name: 'User One' };
      const chat = given.chat ?? { type: 'direct', id: sender.id };
      return {
        channel: id,
        accountId: given.accountId ?? accountId,
        chat,
        sender,
        text: given.text,
        mentionsBot: given.mentionsBot ?? (chat.type === 'direct' || given.text.includes(`@${botUsername}`)),
        messageId: given.messageId ?? `${id}-in-${++inCounter}`,
        timestamp: given.timestamp ?? Date.now(),
        ...(given.threadId !== undefined ? { threadId: given.threadId } : {}),
        ...(given.replyToMessageId !== undefined ? { replyToMessageId: given.replyToMessageId } : {}),
        ...(given.media !== undefined ? { media: given.media } : {}),
      };
    },

    failNextSend(error) {
      failure = error ?? new ColloquyError('CHANNEL_ERROR', `Memory channel "${id}": scripted send failure.`);
    },

    waitForSent(count, timeoutMs = 5000) {
      return waitForCount(
        sent,
        count,
        timeoutMs,
        waiters,
        (have) => `Memory channel "${id}" sent ${have} of ${count} expected messages in ${timeoutMs} ms.`,
      );
    },

    textsTo(to, threadId) {
      return sent
        .filter((m) => m.to.to === to && (threadId === undefined || m.to.threadId === threadId))
        .map((m) => m.text);
    },

    clear() {
      sent.length = 0;
      typing.length = 0;
      threads.length = 0;
      received.length = 0;
    },

    status(): ChannelStatus {
      return { state: context ? 'connected' : 'disconnected' };
    },
  };

  if (capabilities.typing) {
    plugin.sendTyping = async (to) => {
      requireRunning('sendTyping');
      typing.push({ ...to });
    };
  }

  if (capabilities.edits) {
    const findSent = (to: DeliveryContext, messageId: string): SentMessage | undefined =>
      sent.find((m) => m.messageId === messageId && m.to.to === to.to && !m.deleted);
    plugin.editMessage = async (to, messageId, message) => {
      requireRunning('editMessage');
      const target = findSent(to, messageId);
      if (!target) {
        throw new ColloquyError(
          'CHANNEL_ERROR',
          `Memory channel "${id}" has no message ${messageId} in ${to.to} to edit.`,
          { channel: id, messageId },
        );
      }
      if (message.text.trim() === '' || message.text.length > capabilities.maxTextLength) {
        throw new ColloquyError(
          'INVALID_ARGUMENT',
          `An edit must have text that fits one message (1 to ${capabilities.maxTextLength} characters).`,
          { channel: id, messageId },
        );
      }
      if (target.text === message.text) return;
      target.previousTexts = [...(target.previousTexts ?? []), target.text];
      target.text = message.text;
      for (const wake of waiters) wake();
    };
    plugin.deleteMessage = async (to, messageId) => {
      requireRunning('deleteMessage');
      const target = findSent(to, messageId);
      if (target) target.deleted = true;
      for (const wake of waiters) wake();
    };
  }

  if (capabilities.threads) {
    plugin.createThread = async (request: ThreadRequest) => {
      const ctx = requireRunning('createThread');
      const threadId = `${id}-thread-${++threadCounter}`;
      const parent: DeliveryContext = {
        channel: request.parent.channel,
        to: request.parent.to,
        accountId: request.parent.accountId,
      };
      threads.push({ threadId, parent, title: request.title, sessionKey: request.sessionKey });
      const now = Date.now();
      await ctx.threadBindings.put({
        accountId: parent.accountId,
        conversationId: parent.to,
        threadId,
        sessionKey: request.sessionKey,
        createdAt: now,
        lastActiveAt: now,
      });
      return { ...parent, threadId };
    };
  }

  return plugin;
}

/**
 * Splits text into chunks of at most `max` characters, preferring a paragraph break, then a line
 * break, then a space in the last half of each chunk.
 */
function chunkText(text: string, max: number): string[] {
  if (text.length <= max) return [text];
  const chunks: string[] = [];
  let rest = text;
  while (rest.length > max) {
    const window = rest.slice(0, max);
    let cut = -1;
    for (const sep of ['\n\n', '\n', ' ']) {
      const at = window.lastIndexOf(sep);
      if (at >= max / 2) {
        cut = at + sep.length;
        break;
      }
    }
    if (cut <= 0) cut = max;
    chunks.push(rest.slice(0, cut));
    rest = rest.slice(cut);
  }
  if (rest.length > 0) chunks.push(rest);
  return chunks;
}
