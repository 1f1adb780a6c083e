import type { PairingAccess } from '../pairing/pairing.js';
import type { Gateway } from './gateway.js';
import type { Logger } from './logger.js';
import type { ChatType, DeliveryContext, MediaAttachment, ThreadBinding } from './records.js';

/**
 * The markdown dialect a channel renders; the plugin converts model markdown into it. Each has a
 * renderer of the same name in `@colloquy/markdown` (`telegram-html` is `telegramHtml`); `plain` is
 * for channels that show characters as they are (a console, SMS), with no markup and no escapes.
 */
export type MarkdownDialect =
  | 'commonmark'
  | 'telegram-html'
  | 'discord'
  | 'whatsapp'
  | 'slack-mrkdwn'
  | 'plain';

/** What a channel can do. Rare features live here, not in new required methods. */
export interface ChannelCapabilities {
  /** Threads or forum topics can be created and bound to sessions. */
  threads: boolean;
  /** How a bound thread is named in session keys: `thread` (Discord) or `topic` (Telegram). */
  threadKind?: 'thread' | 'topic';
  /**
   * Where a thread id is unique: `account` (default; Discord thread ids are global) or `chat`
   * (Telegram topic ids repeat in every forum). Bindings of `chat`-scoped threads are stored under
   * `<chat id>:<thread id>` (see `threadBindingKey`), so two chats that reuse an id keep their own.
   */
  threadScope?: 'account' | 'chat';
  /** Sent messages can be edited and deleted (`editMessage`, `deleteMessage`). */
  edits: boolean;
  /** Messages can carry reactions. */
  reactions: boolean;
  /** Media can be sent and received. */
  media: boolean;
  /** A typing indicator can be shown (`sendTyping`). */
  typing: boolean;
  /** The platform's maximum text length of one message (after format conversion). */
  maxTextLength: number;
  /** The dialect `send` renders model markdown into. */
  markdown: MarkdownDialect;
}

/** An inbound platform message, normalised by the plugin. */
export interface InboundMessage {
  /** The plugin id. */
  channel: string;
  /** The bot account that received the message. */
  accountId: string;
  /** The chat it was posted in: its type, platform id and title when known. */
  chat: { type: ChatType; id: string; title?: string };
  /** Who wrote it: platform id, display name, username and whether it is a bot. */
  sender: {
    id: string;
    name?: string;
    username?: string;
    isBot?: boolean;
    /**
     * Set by a plugin that authenticated the owner itself (the web chat's admin login). Hosts may
     * treat such a sender as the owner (e.g. for `/send on|off|inherit`).
     */
    isOwner?: boolean;
  };
  /** A thread or forum topic inside the chat. */
  threadId?: string;
  /**
   * The message text (for media, its caption), as the person wrote it. Remove a mention of the bot
   * only where the platform writes it as markup the model cannot read (Discord's `<@id>`), and keep
   * a readable one (Telegram's `@name`); either way, {@link InboundMessage.mentionsBot} says whether
   * the bot was addressed.
   */
  text: string;
  /** Media attached to the message. */
  media?: MediaAttachment[];
  /**
   * The bot is addressed: mentioned, replied to, a command, or the chat's gating config says
   * "always". Group and channel messages without it are not answered.
   */
  mentionsBot: boolean;
  /** The platform message id. */
  messageId: string;
  /** The platform id of the message this one replies to. */
  replyToMessageId?: string;
  /** Epoch ms; default now. */
  timestamp?: number;
}

/** An outbound message. `text` is model markdown; the plugin converts and chunks it. */
export interface OutboundMessage {
  /** The text to send: model markdown, or plain with `format: 'plain'`. */
  text: string;
  /** Reply to (quote) this platform message. */
  replyToMessageId?: string;
  /** `plain` sends the text as is, without markdown conversion. Default `markdown`. */
  format?: 'markdown' | 'plain';
}

/** Result of a send: the id of the first message and of every chunk sent. */
export interface SendResult {
  /** The platform id of the first message sent. */
  messageId: string;
  /** The platform ids of every chunk sent, in order. */
  messageIds: string[];
}

/** Plugin health, shown by `colloquy status`. */
export interface ChannelStatus {
  /** `standby`: another instance of a cluster holds this connection (see `ChannelContext.lease`). */
  state: 'starting' | 'connected' | 'standby' | 'reconnecting' | 'disconnected' | 'logged-out' | 'error';
  /** A human explanation of the state (e.g. the last error). */
  detail?: string;
  /** The state of each bot account, for plugins that run several. */
  accounts?: { accountId: string; state: string; detail?: string }[];
}

/** Binding persistence offered to plugins (backed by the Store). */
export interface ThreadBindingAccess {
  /** The binding of a thread of this channel. */
  get(accountId: string, threadId: string): Promise<ThreadBinding | undefined>;
  /** Inserts or replaces a binding of this channel. */
  put(binding: Omit<ThreadBinding, 'channel'>): Promise<void>;
  /** Records activity through a binding at `at` (epoch ms). */
  touch(accountId: string, threadId: string, at: number): Promise<void>;
  /** Deletes a binding. */
  remove(accountId: string, threadId: string): Promise<void>;
  /** Every binding of this channel. */
  list(): Promise<ThreadBinding[]>;
}

/** A slash command a plugin may register with its platform. */
export interface ChannelCommand {
  /** The command without its slash, e.g. `new`. */
  name: string;
  /** A short description for the platform's command menu. */
  description: string;
}

/** What the runtime gives a plugin at start. The plugin never imports the runtime. */
export interface ChannelContext {
  /** Hands an inbound message to the runtime. Resolves once it is accepted (not answered). */
  receive(message: InboundMessage): Promise<void>;
  /** Runs a slash command as the given sender and returns the reply text (for native command UIs). */
  runCommand?(message: InboundMessage): Promise<string>;
  /** Thread bindings for this plugin's channel. */
  threadBindings: ThreadBindingAccess;
  /** Pairing state of this plugin's channel (`dmPolicy: 'pairing'`), kept in the Store. */
  pairing: PairingAccess;
  /** The slash commands the app supports (for setMyCommands and friends). */
  commands: readonly ChannelCommand[];
  /**
   * A logger bound to the plugin (its lines carry the plugin id). Each level takes an object of
   * fields and a message, or a message alone: `ctx.log.warn({ chatId, err }, 'could not send')`.
   * Never log tokens, or message text at info level or above: the reference app masks the secrets
   * it knows of, but an SDK user's logger may not.
   */
  log: Logger;
  /**
   * The gateway, for plugins that show or stream session state (the web chat's owner panel and
   * streamed replies use `subscribe`). Plugins must not bypass policy: outbound goes through `send`.
   */
  gateway?: Gateway;
  /** Aborted when the runtime shuts down. */
  signal: AbortSignal;
  /**
   * Waits until this instance may hold a connection that only one instance may hold at a time (a
   * Telegram long poll per bot token, a Discord gateway session per shard, a WhatsApp socket per
   * account). Alone, the lease is granted at once; in a cluster the instance holding a database
   * lock for `name` gets it and the others wait, taking over when the holder's connection drops.
   * Stop using the connection as soon as `lost` aborts, then ask again. Absent in older runtimes:
   * then behave as if granted.
   *
   * @param name - names the connection, e.g. `telegram:<botId>`
   * @param signal - stop waiting when aborted (the promise then rejects with `ABORTED`)
   */
  lease?(name: string, signal?: AbortSignal): Promise<ChannelLease>;
  /**
   * Present when this runtime shares its work with other instances (a cluster): lets a plugin that
   * serves its users itself (the web chat's sockets) pass what one instance sends to the same
   * plugin on the others, so a user connected anywhere sees a reply sent from anywhere.
   */
  relay?: ChannelRelay;
}

/** A plugin's channel to the same plugin on the other instances of a cluster. */
export interface ChannelRelay {
  /** Sends a JSON-serialisable payload to this plugin on every other instance (best effort). */
  publish(payload: unknown): Promise<void>;
  /** Receives what this plugin published on the other instances; returns the remover. */
  subscribe(handler: (payload: unknown) => void): () => void;
}

/** A connection this instance holds alone until `lost` aborts or it calls `release`. */
export interface ChannelLease {
  /** Aborts when another instance may take the connection over: stop using it at once. */
  readonly lost: AbortSignal;
  /** Gives the connection up (on stop). Idempotent. */
  release(): Promise<void>;
}

/** A request to create a thread/topic for a session. */
export interface ThreadRequest {
  /** The chat that holds the new thread (a delivery context without `threadId`). */
  parent: DeliveryContext;
  /** A human title for the thread. */
  title: string;
  /** The session the thread will be bound to. */
  sessionKey: string;
  /** Start the thread from this platform message, where the platform supports it. */
  fromMessageId?: string;
}

/**
 * A chat platform. Each plugin package exports one factory returning this.
 * Chunking, format conversion and rate-limit retries live in the plugin; send policy does not
 * (the runtime checks it before calling `send`).
 */
export interface ChannelPlugin {
  /** The channel id, e.g. `telegram`: the `channel` of delivery contexts, keys and config. */
  readonly id: string;
  /** What the channel can do. */
  readonly capabilities: ChannelCapabilities;
  /** Connects to the platform and starts handing inbound messages to `ctx.receive`. */
  start(ctx: ChannelContext): Promise<void>;
  /**
   * The first step of a shutdown: take no more inbound messages (stop polling, refuse new chat
   * messages with an explicit error) while `send` keeps working for the replies still being
   * written. A message refused here must not count as received by the platform (no Telegram offset
   * confirmed for it, a web chat error frame to its sender). Optional: without it the runtime
   * refuses messages itself once it stops accepting.
   */
  stopReceiving?(): Promise<void>;
  /** Stops polling/sockets and releases every resource. Idempotent. */
  stop(): Promise<void>;
  /** Sends a message; resolves with the platform message id(s). Throws `ColloquyError` `CHANNEL_ERROR`. */
  send(to: DeliveryContext, message: OutboundMessage): Promise<SendResult>;
  /** Shows or refreshes a typing indicator. */
  sendTyping?(to: DeliveryContext): Promise<void>;
  /**
   * Replaces the text of a message this plugin sent (`messageId` from a {@link SendResult}) in the
   * chat `to`, converting `message.text` as `send` does. Offered exactly when `capabilities.edits`
   * is true. The new text must fit one platform message (`capabilities.maxTextLength`): edits are
   * for short status lines, not replies. Editing to the text the message already shows succeeds.
   *
   * @param to - the chat (and thread) the message was sent to
   * @param messageId - the platform id of the message
   * @param message - the new text (`replyToMessageId` is ignored)
   * @throws ColloquyError `CHANNEL_ERROR` when the platform refuses (the message is gone, was not
   *   the bot's, or the platform is down; `details.retryable` as for `send`), `INVALID_ARGUMENT`
   *   when the text is blank or longer than one message
   */
  editMessage?(to: DeliveryContext, messageId: string, message: OutboundMessage): Promise<void>;
  /**
   * Deletes a message this plugin sent in the chat `to`. Offered exactly when `capabilities.edits`
   * is true. Deleting a message that is already gone succeeds (the caller wanted it gone).
   *
   * @param to - the chat (and thread) the message was sent to
   * @param messageId - the platform id of the message
   * @throws ColloquyError `CHANNEL_ERROR` when the platform refuses or cannot be reached
   */
  deleteMessage?(to: DeliveryContext, messageId: string): Promise<void>;
  /** Creates a thread/topic; returns the delivery context inside it. */
  createThread?(request: ThreadRequest): Promise<DeliveryContext & { threadId: string }>;
  /** The plugin's health, for `colloquy status`. */
  status?(): ChannelStatus;
}
