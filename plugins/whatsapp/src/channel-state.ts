import type { ChannelContext, Logger } from '@colloquy/core';
import type { WAMessage } from '@whiskeysockets/baileys';
import { LRUCache } from 'lru-cache';
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
  /** Recent messages by id (received and sent, the newest 1,000), for quoting and for Baileys' retry `getMessage`. */
  readonly recent: LRUCache<string, WAMessage>;
  /** Ids of messages this plugin sent (the newest 2,000): their echoes are ignored. */
  readonly sentIds: LRUCache<string, true>;
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
    recent: new LRUCache<string, WAMessage>({ max: 1000 }),
    sentIds: new LRUCache<string, true>({ max: 2000 }),
    awaitingReply: new Map(),
  };
}
