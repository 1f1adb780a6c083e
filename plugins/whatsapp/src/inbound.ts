import { join } from 'node:path';
import { type InboundMessage, receiveUntilStored } from '@colloquy/core';
import type { BaileysEventMap, Contact, GroupMetadata, WAMessage } from '@whiskeysockets/baileys';
import { LRUCache } from 'lru-cache';
import { normalizeMessageContent } from './baileys.js';
import type { ChannelState } from './channel-state.js';
import type { SocketListen, WhatsAppConnection } from './connection.js';
import type { DmAccess } from './dm-access.js';
import { GroupCache } from './group-cache.js';
import { jidKind } from './jid.js';
import { readMessageContent } from './message-content.js';
import { addressesBot, isOwnJid } from './own-account.js';
import {
  DOWNLOADED_KINDS,
  mediaFileName,
  pruneMediaDir,
  type SaveMediaOutcome,
  saveMedia,
  tooBig,
} from './save-media.js';
import { messageTimeMs, toInboundMessage } from './to-inbound.js';

/**
 * Messages in: live and offline-arrived messages become `InboundMessage`s, one at a time, after the
 * access checks; media addressed to the bot is downloaded; contacts, LIDs and group metadata are
 * learned on the way.
 */
export class WhatsAppInbound {
  /** Group metadata for Baileys' `cachedGroupMetadata`. */
  readonly groupCache = new GroupCache();
  private readonly groupFetches = new Set<string>();
  private readonly seenIds = new LRUCache<string, true>({ max: 2000 });
  private queue: Promise<void> = Promise.resolve();
  /** Aborted by `drain()` (the plugin stops): ends the retries of messages the store could not take. */
  private stopping = new AbortController();

  constructor(
    private readonly shared: ChannelState,
    private readonly connection: WhatsAppConnection,
    private readonly access: DmAccess,
  ) {}

  /** Subscribes to a new socket's message, contact and group events. */
  subscribe(listen: SocketListen): void {
    if (this.stopping.signal.aborted) this.stopping = new AbortController();
    listen('messages.upsert', (upsert) => this.onUpsert(upsert));
    listen('contacts.upsert', (contacts) => this.learnContacts(contacts));
    listen('contacts.update', (contacts) => this.learnContacts(contacts));
    listen('groups.upsert', (groups) => {
      for (const meta of groups) this.rememberGroup(meta);
    });
    listen('groups.update', (changes) => {
      for (const change of changes) this.groupCache.update(change);
    });
    listen('group-participants.update', ({ id }) => this.groupCache.invalidate(id));
    listen('lid-mapping.update', ({ lid, pn }) => {
      this.connection.touch();
      this.shared.peers?.learn(lid, pn);
    });
  }

  /**
   * Stops retrying messages the store could not take (each is logged as not handled), and resolves
   * when the messages being handled are done (shutdown waits for it).
   */
  async drain(): Promise<void> {
    this.stopping.abort();
    await this.queue.catch(() => {});
  }

  private onUpsert(upsert: BaileysEventMap['messages.upsert']): void {
    this.connection.touch();
    // `notify` is a live message. `append` is a message that arrived while this device was offline,
    // our own send from another device, or a notification: only the first kind is answered.
    for (const msg of upsert.messages) {
      if (upsert.type !== 'notify' && !this.arrivedWhileOffline(msg)) continue;
      this.queue = this.queue
        .then(() => this.handleMessage(msg))
        .catch((error: unknown) => {
          // Not handled: should WhatsApp deliver it again, it is taken.
          if (msg.key?.id) this.seenIds.delete(msg.key.id);
          this.shared.log.error(
            { err: (error as Error).message, id: msg.key?.id },
            'handling a WhatsApp message failed',
          );
        });
    }
  }

  /** An `append` message someone sent while the account was offline (not ours, not history sync). */
  private arrivedWhileOffline(msg: WAMessage): boolean {
    if (msg.key?.fromMe) return false;
    if (normalizeMessageContent(msg.message)?.protocolMessage?.historySyncNotification) return false;
    const at = messageTimeMs(msg);
    return at !== undefined && this.shared.ledger?.isSinceLastConnection(at) === true;
  }

  private learnContacts(contacts: readonly Partial<Contact>[]): void {
    this.connection.touch();
    this.shared.peers?.learnFromContacts(contacts);
  }

  private async handleMessage(msg: WAMessage): Promise<void> {
    const shared = this.shared;
    const { ctx, peers, config } = shared;
    const key = msg.key;
    const id = key?.id;
    const remoteJid = key?.remoteJid;
    if (!ctx || !peers || !id || !remoteJid) return;
    if (this.seenIds.has(id) || shared.sentIds.has(id) || shared.ledger?.has(id)) return;
    this.seenIds.set(id, true);
    peers.learnFromKey(key);
    const sender = jidKind(remoteJid) === 'group' ? key.participant : remoteJid;
    if (sender) await this.resolveLid(sender);

    const kind = jidKind(remoteJid);
    if (kind === 'other') return; // statuses, broadcast lists, newsletters
    if (kind === 'group') this.fetchGroup(remoteJid);
    const me = this.connection.me();
    const isSelfChat = kind !== 'group' && isOwnJid(remoteJid, me);
    if (config.selfChatMode && !isSelfChat) return;
    if (key.fromMe && !(config.selfChatMode && isSelfChat)) return;

    const content = readMessageContent(msg);
    if (!content) return;

    let inbound: InboundMessage;
    if (kind === 'group') {
      const participant = key.participant ?? '';
      if (isOwnJid(participant, me)) return;
      inbound = toInboundMessage({
        msg,
        content,
        accountId: shared.accountId,
        chat: { type: 'group', id: remoteJid },
        senderId: peers.peerIdFor(participant) ?? participant,
        mentionsBot:
          !this.access.requiresMention(remoteJid) ||
          addressesBot(content, me, (id) => shared.sentIds.has(id)),
      });
    } else {
      const peerId = peers.peerIdFor(remoteJid);
      if (!peerId) return;
      peers.rememberJid(peerId, remoteJid);
      if (!isSelfChat && !(await this.access.mayTalk(peerId, remoteJid, msg.pushName ?? undefined))) return;
      inbound = toInboundMessage({
        msg,
        content,
        accountId: shared.accountId,
        chat: { type: 'direct', id: peerId },
        senderId: peerId,
        mentionsBot: true,
      });
    }

    shared.recent.set(id, msg);
    if (inbound.mentionsBot) {
      shared.awaitingReply.set(remoteJid, { id, at: performance.now() });
      await this.downloadMedia(msg, inbound);
    }
    await receiveUntilStored((m) => ctx.receive(m), inbound, {
      signal: this.stopping.signal,
      ...(shared.options.receiveBackoff ? { backoff: shared.options.receiveBackoff } : {}),
      onRetry: (error, attempt) =>
        shared.log.warn(
          { err: (error as Error).message, id, attempt },
          'WhatsApp message not stored; trying again',
        ),
    });
    shared.ledger?.record(id, Date.now());
    if (config.readReceipts && inbound.mentionsBot) {
      this.connection.sock?.readMessages([key]).catch((error: unknown) => {
        shared.log.debug({ err: (error as Error).message }, 'read receipt failed');
      });
    }
  }

  /**
   * Downloads the images, voice notes, audio and documents of a message addressed to the bot into
   * `<stateDir>/media/` (up to `maxMediaBytes` each) and points their `ref` at the saved file.
   * What is not downloaded keeps its `whatsapp:` ref, and the text says why.
   */
  private async downloadMedia(msg: WAMessage, inbound: InboundMessage): Promise<void> {
    const sock = this.connection.sock;
    const max = this.shared.config.maxMediaBytes;
    if (!sock?.downloadMedia || max <= 0 || !inbound.media) return;
    const dir = join(this.shared.stateDir, 'media');
    const notes: string[] = [];
    for (const media of inbound.media) {
      if (!DOWNLOADED_KINDS.has(media.kind)) continue;
      const label = media.kind === 'voice' ? 'voice note' : media.kind;
      let outcome: SaveMediaOutcome;
      if (media.size !== undefined && media.size > max) outcome = tooBig(max);
      else {
        try {
          const source = await sock.downloadMedia(msg);
          outcome = await saveMedia(source, dir, mediaFileName(inbound.messageId, media), max);
        } catch (error) {
          this.shared.log.warn(
            { err: (error as Error).message, id: inbound.messageId },
            'media download failed',
          );
          outcome = { ok: false, reason: `the download failed: ${(error as Error).message}` };
        }
      }
      if (outcome.ok) {
        media.ref = outcome.path;
        media.size = outcome.size;
      } else notes.push(`[${label} not downloaded: ${outcome.reason}]`);
    }
    if (notes.length > 0) inbound.text = [inbound.text, ...notes].join('\n');
    await pruneMediaDir(dir).catch(() => {});
  }

  /** Caches a group's metadata and learns the LID and phone number of its participants. */
  private rememberGroup(meta: GroupMetadata): void {
    this.groupCache.set(meta);
    this.shared.peers?.learnFromContacts(meta.participants ?? []);
  }

  /** Fills the group cache in the background the first time a group is seen. */
  private fetchGroup(jid: string): void {
    const sock = this.connection.sock;
    if (!sock?.groupMetadata || this.groupCache.has(jid) || this.groupFetches.has(jid)) return;
    this.groupFetches.add(jid);
    sock
      .groupMetadata(jid)
      .then((meta) => this.rememberGroup(meta))
      .catch((error: unknown) => {
        this.shared.log.debug({ err: (error as Error).message, jid }, 'group metadata fetch failed');
      })
      .finally(() => this.groupFetches.delete(jid));
  }

  /**
   * Asks Baileys' LID store for the phone number of a LID the peer map does not know yet, so a
   * person allowlisted by number who writes from a LID is recognised and keeps one session.
   */
  private async resolveLid(jid: string): Promise<void> {
    const peers = this.shared.peers;
    const store = this.connection.sock?.signalRepository?.lidMapping;
    if (!peers || !store || jidKind(jid) !== 'lid' || peers.phoneForLid(jid)) return;
    try {
      peers.learn(jid, await store.getPNForLID(jid));
    } catch (error) {
      this.shared.log.debug({ err: (error as Error).message, jid }, 'LID lookup failed');
    }
  }
}
