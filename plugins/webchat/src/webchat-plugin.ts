import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  type ChannelCapabilities,
  type ChannelContext,
  type ChannelPlugin,
  type ChannelRelay,
  type ChannelStatus,
  ColloquyError,
  type DeliveryContext,
  type OutboundMessage,
  type SendResult,
} from '@colloquy/core';
import { commonmark, renderMessages } from '@colloquy/markdown';
import { normalizeRoomName } from './chat/addressing.js';
import { type ChatHub, createChatHub } from './chat/chat-hub.js';
import { createGatewayBridge, type GatewayBridge } from './chat/gateway-bridge.js';
import { parseRelayedReplies, type RelayedReplies } from './chat/relayed-replies.js';
import { resolveWebChatOptions, type WebChatPluginOptions } from './options.js';
import type { ChatMessage } from './protocol/frames.js';
import { createAddressLimits } from './security/address-limits.js';
import { clientAddressOf, normalizeAddress } from './security/client-address.js';
import { createIdentityIssuer, isVisitorId } from './security/identity.js';
import { randomId } from './security/signed-value.js';
import { createHttpHandler } from './server/http-handler.js';
import { createSocketServer, type SocketServer } from './server/socket-server.js';
import { loadStaticAssets } from './server/static-assets.js';

/** The prefix of the ids of messages the plugin sends (edits and deletes accept only these). */
const SENT_ID_PREFIX = 'out_';
/** How many deleted message ids are remembered (to refuse a late edit of one). */
const MAX_DELETED_IDS = 1000;

/** The web chat channel: a `ChannelPlugin` (`@colloquy/core`) plus the URL it serves. */
export interface WebChatPlugin extends ChannelPlugin {
  /** Always `webchat`. */
  readonly id: 'webchat';
  /**
   * The page's URL once started, e.g. `http://127.0.0.1:7420/`.
   *
   * @throws ColloquyError `CHANNEL_ERROR` before `start` or after `stop`
   */
  address(): string;
}

/** What the web chat can do. Replies render as CommonMark; longer ones arrive as several messages. */
export const WEBCHAT_CAPABILITIES: ChannelCapabilities = {
  threads: false,
  edits: true,
  reactions: false,
  media: false,
  typing: true,
  maxTextLength: 16_000,
  markdown: 'commonmark',
};

interface Running {
  /** Replies sent from other instances of a cluster reach this one's sockets (absent alone). */
  relay: ChannelRelay | undefined;
  stopRelay: () => void;
  server: Server;
  sockets: SocketServer;
  bridge: GatewayBridge;
  hub: ReturnType<typeof createChatHub>;
  url: string;
  onAbort: () => void;
  signal: AbortSignal;
}

/**
 * Creates the web chat channel: an HTTP server with the chat page and a WebSocket protocol for
 * messages, streamed replies, typing and history. Each browser is a visitor with a signed cookie and
 * its own direct chat; `?room=<name>` joins a group room where the assistant answers when addressed.
 *
 * @param options - the `channels.webchat` section (`config`: listening address, look, limits), the
 *   cookie secret (required) and the owner token
 * @returns the plugin; hand it to the runtime, which calls `start`
 * @throws ColloquyError `CONFIG_INVALID` when a setting or secret is missing or out of range
 * @example
 * ```ts
 * const webchat = createWebChatPlugin({
 *   config: { port: 7420 },
 *   cookieSecret: process.env.WEBCHAT_SECRET!,
 *   adminToken: 'owner-token',
 * });
 * await webchat.start(ctx); // the runtime does this
 * console.log(`chat at ${webchat.address()}`);
 * ```
 */
export function createWebChatPlugin(options: WebChatPluginOptions): WebChatPlugin {
  const resolved = resolveWebChatOptions(options);
  const identity = createIdentityIssuer(resolved);
  let running: Running | undefined;
  let state: ChannelStatus['state'] = 'disconnected';

  const requireRunning = (what: string): Running => {
    if (!running) {
      throw new ColloquyError('CHANNEL_ERROR', `The web chat is not running; call start() before ${what}.`);
    }
    return running;
  };

  /** Ids of messages deleted lately (here or on another instance): a late edit of one fails. */
  const deleted = new Set<string>();

  /** Shows a change in the chat's open tabs on this instance and in its kept history. */
  const show = (hub: ChatHub, change: RelayedReplies): void => {
    if (change.change === 'deleted') {
      for (const id of change.ids) {
        deleted.add(id);
        hub.forget(change.chatId, id);
        hub.broadcast(change.chatId, { type: 'delete', id });
      }
      while (deleted.size > MAX_DELETED_IDS) deleted.delete(deleted.values().next().value!);
    } else if (change.change === 'edited') {
      hub.replace(change.chatId, change.messages[0]);
      hub.broadcast(change.chatId, { type: 'edit', message: change.messages[0] });
    } else {
      for (const message of change.messages) {
        hub.remember(change.chatId, message);
        hub.broadcast(change.chatId, { type: 'message', message });
      }
    }
  };

  /** Shows a change here and passes it to the other instances (a visitor may be connected there). */
  const showEverywhere = async (
    hub: ChatHub,
    relay: ChannelRelay | undefined,
    change: RelayedReplies,
  ): Promise<void> => {
    show(hub, change);
    await relay?.publish(change).catch(() => {});
  };

  const chatIdOf = (to: DeliveryContext): string => {
    const id = to.to;
    if (isVisitorId(id) || normalizeRoomName(id) === id) return id;
    throw new ColloquyError(
      'CHANNEL_ERROR',
      `"${id}" is neither a web chat visitor id nor a room name; check the session's deliveryContext.`,
      { to },
    );
  };

  const stop = async (): Promise<void> => {
    const current = running;
    if (!current) return;
    running = undefined;
    current.signal.removeEventListener('abort', current.onAbort);
    current.stopRelay();
    current.bridge.close();
    await current.sockets.close();
    await new Promise<void>((resolve) => {
      current.server.close(() => resolve());
      current.server.closeAllConnections();
    });
    state = 'disconnected';
  };

  return {
    id: 'webchat',
    capabilities: WEBCHAT_CAPABILITIES,

    async start(ctx: ChannelContext) {
      if (running) throw new ColloquyError('CONFLICT', 'The web chat is already started; call stop() first.');
      state = 'starting';
      const log = ctx.log.child({ channel: 'webchat' });
      const assets = await loadStaticAssets();
      let sockets: SocketServer | undefined;
      const hub = createChatHub({
        limit: resolved.historyLimit,
        load: (chat) => bridge.loadHistory(chat),
      });
      const bridge = createGatewayBridge({
        gateway: ctx.gateway,
        channelId: 'webchat',
        hub,
        log,
        historyLimit: resolved.historyLimit,
        publicSender: (sender) => ({
          id: identity.publicId(sender.id),
          name: sender.name ?? sockets?.personOf(sender.id).name ?? 'Guest',
        }),
      });
      const limits = createAddressLimits(resolved);
      const trusted = new Set(resolved.trustedProxies.map(normalizeAddress));
      const addressOf = (req: IncomingMessage) => clientAddressOf(req, trusted);
      sockets = createSocketServer({
        options: resolved,
        channelId: 'webchat',
        identity,
        hub,
        bridge,
        receive: (message) => ctx.receive(message),
        limits,
        addressOf,
        log,
      });
      const server = createServer(
        createHttpHandler({
          identity,
          assets,
          title: resolved.title,
          sessionRows: bridge.sessionRows,
          limits,
          addressOf,
          health: resolved.health,
          log,
        }),
      );
      server.on('upgrade', sockets.handleUpgrade);
      server.on('clientError', (_error, socket) => socket.destroy());
      try {
        await new Promise<void>((resolve, reject) => {
          server.once('error', reject);
          server.listen(resolved.port, resolved.host, () => {
            server.off('error', reject);
            resolve();
          });
        });
      } catch (error) {
        bridge.close();
        await sockets.close();
        state = 'error';
        throw new ColloquyError(
          'CHANNEL_ERROR',
          `The web chat cannot listen on ${resolved.host}:${resolved.port}; set channels.webchat.port to a free port (0 picks one).`,
          { host: resolved.host, port: resolved.port },
          { cause: error },
        );
      }
      server.on('error', (error) => log.error({ err: error }, 'webchat: HTTP server error'));
      const address = server.address() as AddressInfo;
      const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
      const onAbort = (): void => void stop();
      // In a cluster, a reply sent by the instance that ran the turn reaches the visitor here.
      const stopRelay =
        ctx.relay?.subscribe((payload) => {
          const relayed = parseRelayedReplies(payload);
          if (relayed) show(hub, relayed);
        }) ?? (() => {});
      running = {
        relay: ctx.relay,
        stopRelay,
        server,
        sockets,
        bridge,
        hub,
        url: `http://${host}:${address.port}/`,
        onAbort,
        signal: ctx.signal,
      };
      ctx.signal.addEventListener('abort', onAbort, { once: true });
      state = 'connected';
      log.info({ url: running.url }, 'webchat: listening');
    },

    async stopReceiving() {
      running?.sockets.stopAccepting();
    },

    stop,

    async send(to: DeliveryContext, message: OutboundMessage): Promise<SendResult> {
      const { hub, bridge, relay } = requireRunning('send()');
      const chatId = chatIdOf(to);
      const plain = message.format === 'plain';
      const runId = await bridge.claimStreamedRun(chatId);
      const ids: string[] = [];
      const sent: ChatMessage[] = [];
      // The page renders markdown itself: a reply that fits goes as the model wrote it (blank included).
      const limit = WEBCHAT_CAPABILITIES.maxTextLength;
      const chunks =
        message.text.length <= limit
          ? [message.text]
          : renderMessages(message.text, commonmark, { format: plain ? 'plain' : 'markdown', limit });
      for (const [index, text] of chunks.entries()) {
        const chat: ChatMessage = {
          id: `${SENT_ID_PREFIX}${Date.now().toString(36)}${randomId(6)}`,
          role: 'assistant',
          text,
          at: Date.now(),
        };
        if (index === 0 && runId !== undefined) chat.runId = runId;
        if (plain) chat.format = 'plain';
        ids.push(chat.id);
        sent.push(chat);
      }
      // The visitor may be connected to another instance: it shows the reply there.
      await showEverywhere(hub, relay, { chatId, messages: sent });
      return { messageId: ids[0]!, messageIds: ids };
    },

    async editMessage(to: DeliveryContext, messageId: string, message: OutboundMessage): Promise<void> {
      const { hub, relay } = requireRunning('editMessage()');
      const chatId = chatIdOf(to);
      if (!messageId.startsWith(SENT_ID_PREFIX) || deleted.has(messageId)) {
        throw new ColloquyError(
          'CHANNEL_ERROR',
          `The web chat has no message ${messageId} to edit: it was deleted, or not sent by this bot.`,
          { chatId, messageId },
        );
      }
      if (message.text.trim() === '' || message.text.length > WEBCHAT_CAPABILITIES.maxTextLength) {
        throw new ColloquyError(
          'INVALID_ARGUMENT',
          `An edited web chat message needs 1 to ${WEBCHAT_CAPABILITIES.maxTextLength} characters of text.`,
          { chatId, messageId },
        );
      }
      const kept = hub.find(chatId, messageId);
      const edited: ChatMessage = {
        id: messageId,
        role: 'assistant',
        text: message.text,
        at: kept?.at ?? Date.now(),
      };
      if (message.format === 'plain') edited.format = 'plain';
      await showEverywhere(hub, relay, { chatId, change: 'edited', messages: [edited] });
    },

    async deleteMessage(to: DeliveryContext, messageId: string): Promise<void> {
      const { hub, relay } = requireRunning('deleteMessage()');
      await showEverywhere(hub, relay, { chatId: chatIdOf(to), change: 'deleted', ids: [messageId] });
    },

    async sendTyping(to: DeliveryContext): Promise<void> {
      const { hub } = requireRunning('sendTyping()');
      hub.broadcast(chatIdOf(to), { type: 'typing', role: 'assistant' });
    },

    status(): ChannelStatus {
      return running ? { state, detail: running.url } : { state };
    },

    address(): string {
      return requireRunning('address()').url;
    },
  };
}
