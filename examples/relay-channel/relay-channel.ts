// A complete Colloquy channel in one file, the example of docs/writing-a-channel.md. Its platform is
// "Relay", a toy chat server defined here too, so the file runs anywhere: the testkit conformance
// suite drives it in CI (test/conformance.test.ts beside it). Swap RelayServer for your platform's
// client library and keep the rest.
import {
  type ChannelCapabilities,
  type ChannelContext,
  type ChannelLease,
  type ChannelPlugin,
  type ChannelStatus,
  ColloquyError,
  type DeliveryContext,
  type OutboundMessage,
  type SendResult,
} from '@colloquy/core';
import { PLAIN_TEXT_LIMIT, plain, renderMessages } from '@colloquy/markdown';

// --- the platform: a toy chat server (your SDK's client in a real channel) ---

/** A message on Relay: rooms are groups, a room named `dm:<user>` is a direct chat with the bot. */
export interface RelayMessage {
  id: string;
  room: string;
  from: string;
  text: string;
}

/** A chat server that keeps rooms of messages and pushes new ones to one connected bot. */
export class RelayServer {
  readonly posted: RelayMessage[] = [];
  private listener: ((message: RelayMessage) => void) | undefined;
  private next = 0;

  /** Connects the bot; the server pushes every message posted after this. */
  connect(listener: (message: RelayMessage) => void): void {
    this.listener = listener;
  }
  disconnect(): void {
    this.listener = undefined;
  }
  get connected(): boolean {
    return this.listener !== undefined;
  }
  /** Posts a message (a person, or the bot through `send`) and pushes it to the bot. */
  post(room: string, from: string, text: string): RelayMessage {
    const message = { id: `m${++this.next}`, room, from, text };
    this.posted.push(message);
    this.listener?.(message);
    return message;
  }
}

// --- the channel ---

/** Options of {@link createRelayChannel}. */
export interface RelayChannelOptions {
  server: RelayServer;
  /** The bot's name on Relay; `@<name>` in a room addresses it. Default `bot`. */
  botName?: string;
  /** The account id in delivery contexts and keys. Default `default`. */
  accountId?: string;
}

/** Relay has no threads, edits or typing; it shows text as written (the `plain` dialect). */
export const RELAY_CAPABILITIES: ChannelCapabilities = {
  threads: false,
  edits: false,
  reactions: false,
  media: false,
  typing: false,
  maxTextLength: PLAIN_TEXT_LIMIT,
  markdown: 'plain',
};

/**
 * The Relay channel: every room message goes to the runtime (addressed when it mentions the bot
 * or is a DM), and replies are rendered as plain text and split at the platform's limit.
 */
export function createRelayChannel(options: RelayChannelOptions): ChannelPlugin {
  const { server } = options;
  const botName = options.botName ?? 'bot';
  const accountId = options.accountId ?? 'default';
  const mention = `@${botName}`;
  let state: ChannelStatus['state'] = 'starting';
  let lease: ChannelLease | undefined;

  function onMessage(ctx: ChannelContext, message: RelayMessage): void {
    if (message.from === botName) return; // never answer yourself
    const direct = message.room.startsWith('dm:');
    const addressed = direct || message.text.includes(mention);
    // `@bot` is readable, so it stays in the text; mentionsBot carries the gating.
    ctx
      .receive({
        channel: 'relay',
        accountId,
        chat: direct ? { type: 'direct', id: message.from } : { type: 'group', id: message.room },
        sender: { id: message.from, name: message.from },
        text: message.text,
        mentionsBot: addressed,
        messageId: message.id,
      })
      .catch((error: unknown) =>
        ctx.log.warn({ err: error, messageId: message.id }, 'relay message refused'),
      );
  }

  return {
    id: 'relay',
    capabilities: RELAY_CAPABILITIES,
    async start(ctx) {
      // One connection per bot across a cluster: wait for the lease where the runtime offers one.
      lease = await ctx.lease?.(`relay:${accountId}`, ctx.signal);
      server.connect((message) => onMessage(ctx, message));
      state = 'connected';
      lease?.lost.addEventListener('abort', () => {
        server.disconnect();
        state = 'standby';
      });
      ctx.log.info({ accountId }, 'relay connected');
    },
    async stop() {
      server.disconnect();
      state = 'disconnected';
      await lease?.release();
      lease = undefined;
    },
    async send(to: DeliveryContext, message: OutboundMessage): Promise<SendResult> {
      if (!server.connected)
        throw new ColloquyError('CHANNEL_ERROR', 'Relay is not connected: start the channel first.');
      const room = to.to.startsWith('dm:') || to.to.startsWith('room:') ? to.to : `dm:${to.to}`;
      const chunks = renderMessages(message.text, plain, { format: message.format ?? 'markdown' });
      if (chunks.length === 0)
        throw new ColloquyError('INVALID_ARGUMENT', 'Cannot send a blank message to Relay.');
      const ids = chunks.map((chunk) => server.post(room, botName, chunk).id);
      return { messageId: ids[0]!, messageIds: ids };
    },
    status: () => ({ state }),
  };
}
