import type { ChannelContext, Logger } from '@colloquy/core';
import type { WAMessage } from '@whiskeysockets/baileys';
import { BoundedMap, BoundedSet } from './bounded.js';
import type { WhatsAppConfig } from './config.js';
import type { InboundLedger } from './inbound-ledger.js';
import type { PeerMap } from './peer-map.js';
import type { WhatsAppPluginOptions } from './plugin-options.js';
import type { SentMessageStore } from './sent-message-store.js';

/**
 * What the parts of one WhatsApp channel share: its settings, the runtime context and logger once
 * started, the state files loaded at start, and the messages it has seen and sent.
 */
export interface ChannelState {
  readonly accountId: string;
  readonly stateDir: string;
  readonly config: WhatsAppConfig;
  readonly options: WhatsAppPluginOptions;
  /** Set by `start`. */
  ctx: ChannelContext | undefined;
  log: Logger;
  /** LID <-> phone number map, loaded at start. */
  peers: PeerMap | undefined;
  /** Ids of handled inbound messages and when the link was last up, loaded at start. */
  ledger: InboundLedger | undefined;
  /** What the bot sent, kept across restarts for Baileys' retry `getMessage`. */
  sentStore: SentMessageStore | undefined;
  /** Recent messages by id (received and sent), for quoting and for Baileys' retry `getMessage`. */
  readonly recent: BoundedMap<string, WAMessage>;
  /** Ids of messages this plugin sent: their echoes are ignored. */
  readonly sentIds: BoundedSet<string>;
  /** Per chat: the latest message that addressed the bot, quoted by the next reply. */
  readonly awaitingReply: Map<string, { id: string; at: number }>;
}

/** The shared state of a channel that has not started yet. */
export function createChannelState(
  options: WhatsAppPluginOptions,
  config: WhatsAppConfig,
  stateDir: string,
  log: Logger,
): ChannelState {
  return {
    accountId: options.accountId ?? 'default',
    stateDir,
    config,
    options,
    ctx: undefined,
    log,
    peers: undefined,
    ledger: undefined,
    sentStore: undefined,
    recent: new BoundedMap<string, WAMessage>(1000),
    sentIds: new BoundedSet<string>(2000),
    awaitingReply: new Map(),
  };
}
