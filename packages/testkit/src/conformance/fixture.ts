import type { ChannelPlugin, ChatType, DeliveryContext } from '@colloquy/core';

/** A platform user the fixture can make messages come from (in the platform's own id form). */
export interface ConformancePeer {
  /** The platform user id, exactly as the plugin will report it in `sender.id`. */
  id: string;
  /** The user's display name, when the platform reports one. */
  name?: string;
}

/**
 * A platform-neutral inbound message the suite asks the fixture to deliver. The fixture turns it into
 * whatever its fake platform sends (a Telegram update, a Discord gateway event, a Baileys upsert, a web
 * chat frame) and lets the plugin pick it up the way it would in production.
 */
export interface ConformanceInbound {
  /** The type of chat the message is posted in. */
  chatType: ChatType;
  /**
   * The platform chat id. Set for `group` and `channel` chats (one of the fixture's `chats`); absent for
   * `direct` chats, where the fixture uses the DM chat with `sender`.
   */
  chatId?: string;
  /** Who posts the message. */
  sender: ConformancePeer;
  /** The user's words. The fixture may add a mention around them (see `mentionBot`). */
  text: string;
  /**
   * Address the bot the way the platform does (an `@mention`, a reply to the bot). False: a plain message
   * the bot merely sees. Ignored for direct chats, which always address the bot.
   */
  mentionBot: boolean;
  /** Post inside this thread/topic of the chat. */
  threadId?: string;
}

/** What the fixture reports about a delivered inbound message. */
export interface InjectedInbound {
  /** The platform message id the fake platform assigned; the plugin must report it as `messageId`. */
  messageId?: string;
}

/** One message as the fake platform received it from the plugin. */
export interface PlatformSentMessage {
  /** The message id the fake platform assigned (the plugin must return it from `send`). */
  messageId: string;
  /** The platform chat id it was sent to. */
  chatId: string;
  /** The thread/topic it was posted in, if any. */
  threadId?: string;
  /**
   * The text as the platform holds it now (after the plugin's format conversion, and after its
   * latest edit for plugins with `capabilities.edits`).
   */
  text: string;
  /** True once the plugin deleted it (`deleteMessage`); a fixture may instead leave it out. */
  deleted?: boolean;
}

/**
 * Everything the channel conformance suite needs from one plugin and its fake platform. `setup` builds
 * a fresh one per test; the suite starts the plugin, runs one check and stops it again.
 */
export interface ChannelConformanceFixture {
  /** The plugin under test, configured against the fake platform and not started. */
  plugin: ChannelPlugin;
  /** The bot account the plugin runs as (expected as `InboundMessage.accountId`). */
  accountId: string;
  /** At least two distinct platform users that can message the bot. */
  peers: readonly [ConformancePeer, ConformancePeer, ...ConformancePeer[]];
  /**
   * Chats of each non-direct type the platform has, by type (platform ids). The suite injects into every
   * type listed here, plus `direct`. Example: `{ group: '-100123' }`, or `{}` for DM-only channels.
   */
  chats: Partial<Record<Exclude<ChatType, 'direct'>, string>>;
  /** Where the suite sends outbound messages: a chat the fake platform accepts (usually a DM with a peer). */
  sendTarget: DeliveryContext;
  /**
   * Where threads are created, for plugins with `capabilities.threads`: the parent chat (a Discord text
   * channel, a Telegram forum supergroup) and the chat type its inbound messages have.
   */
  threadParent?: { to: DeliveryContext; chatType: Exclude<ChatType, 'direct'> };
  /** Resolves once the started plugin is connected and can receive (e.g. the gateway said READY). */
  ready?(): Promise<void>;
  /**
   * Makes the fake platform deliver an inbound message to the plugin. It must resolve even when the
   * plugin is stopped (then nothing should arrive).
   */
  inject(message: ConformanceInbound): Promise<InjectedInbound | undefined>;
  /** Everything the fake platform received from the plugin so far, oldest first. */
  readSent(): readonly PlatformSentMessage[] | Promise<readonly PlatformSentMessage[]>;
  /**
   * True once the plugin holds nothing on the platform any more: sockets closed, no polling request in
   * flight or coming. Strongly recommended; without it the suite can only check that nothing arrives.
   */
  isReleased?(): boolean | Promise<boolean>;
  /** Called after each test, after `plugin.stop()`: close the fake platform, remove temp dirs. */
  cleanup?(): void | Promise<void>;
}

/** Options of `runChannelPluginConformance`. */
export interface ChannelConformanceOptions {
  /** How long to wait for an injected message to reach `ctx.receive`. Default 5000 ms. */
  inboundTimeoutMs?: number;
  /** How long `isReleased()` may take to become true after `stop()`. Default 5000 ms. */
  releaseTimeoutMs?: number;
  /** How long to watch for stray deliveries after `stop()`. Default 300 ms. */
  quietPeriodMs?: number;
  /** The agent id used for key derivation checks. Default `main`. */
  agentId?: string;
}
