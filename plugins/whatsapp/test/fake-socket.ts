// A fake of the Baileys socket surface the plugin uses, driven by a FakeWhatsApp "server" that
// plays WhatsApp and the owner's phone: it shows QR codes, links the device, delivers messages,
// drops connections and logs the device out. No network is involved.

import { randomBytes } from 'node:crypto';
import { EventEmitter } from 'node:events';
import type {
  BaileysEventMap,
  Contact,
  GroupMetadata,
  proto,
  WAMessage,
  WAMessageKey,
  WAPresence,
} from '@whiskeysockets/baileys';
import type { WhatsAppSocketConfig, WhatsAppSocketLike } from '../src/socket.js';

/** Baileys closes sockets with Boom errors; the plugin reads `output.statusCode`. */
export function boom(statusCode: number, message: string): Error {
  return Object.assign(new Error(message), {
    isBoom: true,
    output: { statusCode, payload: { statusCode, message } },
  });
}

/** Message ids look like Baileys' (`3EB0` + hex). */
export const newMessageId = (): string => `3EB0${randomBytes(9).toString('hex').toUpperCase()}`;

class FakeEmitter {
  private readonly emitter = new EventEmitter();

  on<E extends keyof BaileysEventMap>(event: E, listener: (arg: BaileysEventMap[E]) => void): void {
    this.emitter.on(event, listener);
  }

  off<E extends keyof BaileysEventMap>(event: E, listener: (arg: BaileysEventMap[E]) => void): void {
    this.emitter.off(event, listener);
  }

  emit<E extends keyof BaileysEventMap>(event: E, arg: BaileysEventMap[E]): boolean {
    return this.emitter.emit(event, arg);
  }

  removeAllListeners(event: keyof BaileysEventMap): void {
    this.emitter.removeAllListeners(event);
  }

  listenerCount(event: keyof BaileysEventMap): number {
    return this.emitter.listenerCount(event);
  }
}

/** One message the bot sent. */
export interface SentMessage {
  jid: string;
  text: string;
  quoted?: WAMessage;
  id: string;
}

/** A fake Baileys socket: records what the plugin does and lets the test drive events. */
export class FakeSocket implements WhatsAppSocketLike {
  readonly ev = new FakeEmitter();
  readonly ws = new EventEmitter();
  user: Contact | undefined;
  closed = false;
  /** Make the next sendMessage fail with this error. */
  failNextSend: Error | undefined;
  /** Baileys 7's LID store, backed by {@link FakeWhatsApp.lidToPn}. */
  readonly signalRepository = {
    lidMapping: {
      getPNForLID: async (lid: string): Promise<string | null> =>
        this.server.lidToPn.get(lid.replace(/:\d+@/, '@')) ?? null,
    },
  };

  constructor(
    readonly server: FakeWhatsApp,
    readonly config: WhatsAppSocketConfig,
  ) {
    // Like Baileys: the socket applies creds updates to the auth state before anyone saves them.
    this.ev.on('creds.update', (update) => Object.assign(config.auth.creds, update));
  }

  /** Connects: a linked device opens, an unlinked one shows a QR code. */
  boot(): void {
    setImmediate(() => {
      if (this.closed) return;
      this.ev.emit('connection.update', { connection: 'connecting' });
      const outage = this.server.outage;
      // Unreachable: Baileys closes a socket whose WebSocket failed to connect with a 408.
      if (outage?.link) this.drop(outage.statusCode, 'WebSocket Error (connect ECONNREFUSED)');
      else if (this.config.auth.creds.me && this.server.autoOpen) this.open();
      else if (!this.config.auth.creds.me) this.ev.emit('connection.update', { qr: this.server.nextQr() });
    });
  }

  open(): void {
    this.user = this.config.auth.creds.me;
    this.ev.emit('connection.update', { connection: 'open', isNewLogin: false });
  }

  /** The owner scans the QR code: credentials are issued, then WhatsApp asks for a restart (515). */
  scanQr(): void {
    const { account } = this.server;
    this.ev.emit('creds.update', { me: account, registered: true, platform: 'android' });
    this.end(boom(515, 'Stream Errored (restart required)'));
  }

  /** A WebSocket frame arrived (keep-alive answers and every stanza). */
  frame(): void {
    this.ws.emit('frame');
  }

  /**
   * Emits `messages.upsert` as Baileys 7 does: `notify` for a live message; `append` for a
   * message stanza flagged `offline` (it reached WhatsApp while this device was disconnected and is
   * delivered after the reconnect), for our own sends echoed from other devices and for
   * notifications. Baileys emits one message per event (`{ messages: [msg], type }`, no
   * `requestId`); its event buffer may merge several into one batch.
   */
  deliver(messages: WAMessage[], type: 'notify' | 'append' = 'notify'): void {
    this.ev.emit('messages.upsert', { messages, type });
  }

  emit<E extends keyof BaileysEventMap>(event: E, arg: BaileysEventMap[E]): void {
    this.ev.emit(event, arg);
  }

  /** WhatsApp closes the connection with a status code. */
  drop(statusCode: number, message = 'Connection Closed'): void {
    this.end(boom(statusCode, message));
  }

  async sendMessage(
    jid: string,
    content: { text: string },
    options?: { quoted?: WAMessage },
  ): Promise<WAMessage> {
    await Promise.resolve();
    if (this.closed) throw boom(428, 'Connection Closed');
    const outage = this.server.outage;
    if (outage)
      throw boom(outage.statusCode, outage.statusCode === 408 ? 'Timed Out' : 'service-unavailable');
    if (this.failNextSend) {
      const error = this.failNextSend;
      this.failNextSend = undefined;
      throw error;
    }
    const id = newMessageId();
    const sent: SentMessage = { jid, text: content.text, id };
    if (options?.quoted) sent.quoted = options.quoted;
    this.server.sent.push(sent);
    const message: WAMessage = {
      key: { remoteJid: jid, fromMe: true, id },
      message: { extendedTextMessage: { text: content.text } },
      messageTimestamp: Math.floor(Date.now() / 1000),
    };
    if (this.server.echoSends) setImmediate(() => this.deliver([message]));
    return message;
  }

  async sendPresenceUpdate(type: WAPresence, toJid?: string): Promise<void> {
    if (this.closed) throw boom(428, 'Connection Closed');
    this.server.presences.push({ type, jid: toJid });
  }

  async readMessages(keys: WAMessageKey[]): Promise<void> {
    this.server.reads.push(...keys);
  }

  /** Like Baileys' `groupMetadata`: a query to WhatsApp, counted. */
  async groupMetadata(jid: string): Promise<GroupMetadata> {
    if (this.closed) throw boom(428, 'Connection Closed');
    this.server.groupQueries.push(jid);
    const meta = this.server.groups.get(jid);
    if (!meta) throw boom(404, 'item-not-found');
    return meta;
  }

  /** Like Baileys' `downloadMediaMessage(msg, 'stream')`: the decrypted bytes, in chunks. */
  async downloadMedia(msg: WAMessage): Promise<AsyncIterable<Uint8Array>> {
    const bytes = this.server.media.get(msg.key.id ?? '');
    if (!bytes) throw boom(404, 'media not found (expired)');
    this.server.downloads.push(msg.key.id ?? '');
    return (async function* () {
      for (let at = 0; at < bytes.length; at += 64 * 1024) yield bytes.subarray(at, at + 64 * 1024);
    })();
  }

  end(error: Error | undefined): void {
    if (this.closed) return;
    this.closed = true;
    this.ev.emit('connection.update', { connection: 'close', lastDisconnect: { error, date: new Date() } });
    this.ev.removeAllListeners('connection.update');
  }

  async logout(): Promise<void> {
    this.end(boom(401, 'Intentional Logout'));
  }
}

/** How WhatsApp fails while an outage lasts (see {@link FakeWhatsApp.startOutage}). */
export interface FakeWhatsAppOutage {
  /**
   * The status code of the Boom that sends (and, with `link`, the closes) carry: 503 for WhatsApp
   * answering `service-unavailable`, 408 for a query Baileys timed out on. Default 503.
   */
  statusCode: number;
  /**
   * The link goes down too: open sockets close with the status code, and new ones fail to connect
   * until the outage ends, so nothing comes in meanwhile. Without it, the socket stays up and
   * messages keep coming in while every send fails (an outage behind WhatsApp's front servers).
   */
  link: boolean;
}

/** The fake WhatsApp service and the owner's phone. Pass `makeSocket` to the plugin. */
export class FakeWhatsApp {
  readonly sockets: FakeSocket[] = [];
  readonly sent: SentMessage[] = [];
  readonly presences: { type: WAPresence; jid: string | undefined }[] = [];
  readonly reads: WAMessageKey[] = [];
  /** What Baileys 7's LID store knows: device-less LID JID -> phone JID. */
  readonly lidToPn = new Map<string, string>();
  /** Group metadata WhatsApp answers `groupMetadata` queries with, and the queries made. */
  readonly groups = new Map<string, GroupMetadata>();
  readonly groupQueries: string[] = [];
  /** Media bytes by message id (what `downloadMedia` returns), and the downloads made. */
  readonly media = new Map<string, Uint8Array>();
  readonly downloads: string[] = [];
  /** The linked account: its phone JID (with device) and LID. */
  account: Contact = { id: '15550001111:7@s.whatsapp.net', lid: '99000111:7@lid', name: 'Owner' };
  /** Linked sockets open by themselves. */
  autoOpen = true;
  /** Deliver each sent message back as a `notify` echo (as the owner's phone would sync it). */
  echoSends = false;
  /** The outage under way, if any. */
  outage: FakeWhatsAppOutage | undefined;
  private qrCount = 0;
  private waiters: (() => void)[] = [];

  readonly makeSocket = (config: WhatsAppSocketConfig): FakeSocket => {
    const socket = new FakeSocket(this, config);
    this.sockets.push(socket);
    socket.boot();
    for (const wake of this.waiters.splice(0)) wake();
    return socket;
  };

  /**
   * WhatsApp fails until {@link FakeWhatsApp.endOutage}: every send throws a Boom with the outage's
   * status code, as Baileys does when WhatsApp answers an error or a query times out; with `link`,
   * the open socket closes and reconnects fail too.
   */
  startOutage(outage: Partial<FakeWhatsAppOutage> = {}): void {
    this.outage = { statusCode: outage.statusCode ?? 503, link: outage.link ?? false };
    if (!this.outage.link) return;
    for (const socket of this.sockets) socket.drop(this.outage.statusCode, 'Connection Lost');
  }

  /** Ends the outage: sends go through again, and the next reconnect opens. */
  endOutage(): void {
    this.outage = undefined;
  }

  nextQr(): string {
    this.qrCount += 1;
    return `2@fake-qr-${this.qrCount},noise,identity,adv`;
  }

  /** The newest socket. */
  get current(): FakeSocket {
    const socket = this.sockets.at(-1);
    if (!socket) throw new Error('no socket was made yet');
    return socket;
  }

  /** Resolves once at least `count` sockets were made. */
  async waitForSockets(count: number, timeoutMs = 2000): Promise<FakeSocket> {
    const deadline = Date.now() + timeoutMs;
    while (this.sockets.length < count) {
      if (Date.now() > deadline) throw new Error(`expected ${count} sockets, got ${this.sockets.length}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 20);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
    return this.sockets[count - 1] as FakeSocket;
  }
}

// --- message builders ---

const now = (): number => Math.floor(Date.now() / 1000);

/**
 * A direct text message from `from` (a phone or LID JID), sent now or at `sentAt` (epoch ms). `alt`
 * is the sender's other JID, which Baileys 7 puts on the key as `remoteJidAlt` (with the chat's
 * `addressingMode`) when WhatsApp names both.
 */
export function dm(
  from: string,
  text: string,
  extra: { pushName?: string; id?: string; fromMe?: boolean; sentAt?: number; alt?: string } = {},
): WAMessage {
  const key: WAMessageKey = {
    remoteJid: from,
    fromMe: extra.fromMe ?? false,
    id: extra.id ?? newMessageId(),
  };
  if (extra.alt) {
    key.remoteJidAlt = extra.alt;
    key.addressingMode = from.endsWith('@lid') ? 'lid' : 'pn';
  }
  // The shape Baileys' decodeMessageNode gives: the timestamp is the stanza's `t`, in seconds.
  return {
    key,
    message: { conversation: text },
    messageTimestamp: extra.sentAt === undefined ? now() : Math.floor(extra.sentAt / 1000),
    pushName: extra.pushName ?? 'Alice',
    broadcast: false,
  };
}

/** A group text message, optionally mentioning JIDs or replying to a message. */
export function groupMessage(
  group: string,
  participant: string,
  text: string,
  extra: {
    mentions?: string[];
    quoted?: { id: string; participant: string };
    pushName?: string;
    /** The participant's other JID (`participantAlt` in Baileys 7). */
    participantAlt?: string;
  } = {},
): WAMessage {
  const contextInfo: proto.IContextInfo = {};
  if (extra.mentions) contextInfo.mentionedJid = extra.mentions;
  if (extra.quoted) {
    contextInfo.stanzaId = extra.quoted.id;
    contextInfo.participant = extra.quoted.participant;
    contextInfo.quotedMessage = { conversation: 'earlier' };
  }
  return {
    key: {
      remoteJid: group,
      fromMe: false,
      id: newMessageId(),
      participant,
      ...(extra.participantAlt ? { participantAlt: extra.participantAlt } : {}),
    },
    message: { extendedTextMessage: { text, contextInfo } },
    messageTimestamp: now(),
    pushName: extra.pushName ?? 'Bob',
  };
}

/** A media message (image, document or voice note) in a direct chat. */
export function mediaMessage(from: string, message: proto.IMessage, id = newMessageId()): WAMessage {
  return {
    key: { remoteJid: from, fromMe: false, id },
    message,
    messageTimestamp: now(),
    pushName: 'Alice',
  };
}
