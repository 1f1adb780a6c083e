import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import {
  type ChannelCapabilities,
  type ChannelContext,
  type ChannelLease,
  type ChannelPlugin,
  type ChannelStatus,
  ColloquyError,
  type DeliveryContext,
  type InboundMessage,
  isColloquyError,
  type Logger,
  type OutboundMessage,
  type SendResult,
  silentLogger,
} from '@colloquy/core';
import { renderMessages, whatsapp } from '@colloquy/markdown';
import type {
  BaileysEventMap,
  Contact,
  GroupMetadata,
  SignalKeyStore,
  WAMessage,
} from '@whiskeysockets/baileys';
import { nodeStateFs, type StateFs } from './atomic-file.js';
import { type AtomicAuthState, resetWhatsAppAuth, useAtomicAuthState } from './auth-state.js';
import { makeBaileysSocket, makeCacheableSignalKeyStore, normalizeMessageContent } from './baileys.js';
import { toBaileysLogger } from './baileys-logger.js';
import { BoundedMap, BoundedSet } from './bounded.js';
import { type BackoffOptions, backoffDelay, classifyClose, closeStatusCode } from './close-reason.js';
import { resolveWhatsAppConfig, type WhatsAppConfig, type WhatsAppConfigInput } from './config.js';
import { GroupCache } from './group-cache.js';
import { InboundLedger } from './inbound-ledger.js';
import { jidKind, jidUser, normalizePeerEntry } from './jid.js';
import { importLegacyPairingFile } from './legacy-pairing-file.js';
import { readMessageContent } from './message-content.js';
import { addressesBot, isOwnJid } from './own-account.js';
import { PeerMap } from './peer-map.js';
import { printQr, type QrOutput } from './qr.js';
import {
  DOWNLOADED_KINDS,
  mediaFileName,
  pruneMediaDir,
  type SaveMediaOutcome,
  saveMedia,
  tooBig,
} from './save-media.js';
import { SentMessageStore } from './sent-message-store.js';
import type { WhatsAppEventMap, WhatsAppSocketFactory, WhatsAppSocketLike } from './socket.js';
import { messageTimeMs, toInboundMessage } from './to-inbound.js';
import { TypingIndicator } from './typing-indicator.js';

/** Options of {@link createWhatsAppPlugin}: the `channels.whatsapp` settings plus wiring. */
export interface WhatsAppPluginOptions extends WhatsAppConfigInput {
  /** Folder for credentials (`auth/`), the LID map and pairings. Required. */
  stateDir: string;
  /** The account id used in session keys and delivery contexts. Default `default`. */
  accountId?: string;
  /** Makes the socket. Default: Baileys' `makeWASocket`. Tests pass a fake. */
  makeSocket?: WhatsAppSocketFactory;
  /** Where the pairing QR code is printed. Default `process.stdout`; `false` prints nothing. */
  qrOutput?: QrOutput | false;
  /** Called with every new QR string (the web chat's owner panel shows it). */
  onQr?: (qr: string) => void;
  /** Known LID -> phone pairs (`'123456@lid': '+15551234567'`), merged into the learned map. */
  contacts?: Record<string, string>;
  /** Reconnect backoff. Default 1 s doubling to 60 s. */
  reconnect?: BackoffOptions;
  /**
   * A connected socket with no frame from WhatsApp for this long is judged dead and replaced.
   * Baileys pings every 30 s, so a healthy link never gets near. Default 180000 ms; 0 disables.
   */
  staleAfterMs?: number;
  /** How long `send` waits for a (re)connection before failing. Default 30000 ms. */
  sendTimeoutMs?: number;
  /**
   * How long "typing…" stays after the last `sendTyping` call (the runtime refreshes it every few
   * seconds while a run is active); a reply ends it at once. Default 15000 ms.
   */
  typingTimeoutMs?: number;
  /**
   * When to quote the message being answered: the `replyToMessageId` of the send, else the latest
   * message that addressed the bot in that chat (within 10 minutes). Default `groups`.
   */
  quoteReplies?: 'groups' | 'always' | 'off';
  /** The text sent to a newcomer under `dmPolicy: 'pairing'`. */
  pairingMessage?: (code: string) => string;
  /** File-system seam for the state files (fault-injection tests). Default `node:fs/promises`. */
  fs?: StateFs;
}

/** The WhatsApp channel: a {@link ChannelPlugin} with linking helpers. */
export interface WhatsAppPlugin extends ChannelPlugin {
  readonly id: 'whatsapp';
  status(): ChannelStatus;
  /** The QR string waiting to be scanned, if the device is not linked yet. */
  latestQr(): string | undefined;
  /** Unlinks this device from the phone and deletes the stored credentials. */
  logout(): Promise<void>;
}

const CONFIG_KEYS = [
  'enabled',
  'stateDir',
  'dmPolicy',
  'allowFrom',
  'selfChatMode',
  'groups',
  'requireMentionByDefault',
  'chunkLength',
  'readReceipts',
  'maxMediaBytes',
] as const satisfies readonly (keyof WhatsAppConfig)[];

/** A reply quotes the message that addressed the bot only if it comes within this time. */
const QUOTE_WINDOW_MS = 10 * 60 * 1000;

const defaultPairingMessage = (code: string): string =>
  `Hi! This assistant only answers people its owner has approved.\nYour pairing code: ${code}\nSend it to the owner; it expires in one hour.`;

type Listener = { event: keyof WhatsAppEventMap; fn: (arg: never) => void };

/**
 * Creates the WhatsApp channel plugin on Baileys (a linked device of a personal or business
 * WhatsApp account). Link it once by scanning the QR code printed at start; credentials are kept
 * in `stateDir/auth` with crash-safe writes.
 *
 * @param options - {@link WhatsAppPluginOptions}; the `channels.whatsapp` fields are validated
 * @returns the plugin, to hand to the runtime
 * @throws ColloquyError `CONFIG_INVALID` when a setting is invalid (with the paths)
 * @example
 * ```ts
 * const whatsapp = createWhatsAppPlugin({
 *   stateDir: '/var/lib/bot/whatsapp',
 *   dmPolicy: 'allowlist',
 *   allowFrom: ['+15551234567'],
 * });
 * const runtime = createRuntime({ config, store, model, channels: [whatsapp] });
 * ```
 */
export function createWhatsAppPlugin(options: WhatsAppPluginOptions): WhatsAppPlugin {
  const section: Record<string, unknown> = {};
  for (const key of CONFIG_KEYS) if (options[key] !== undefined) section[key] = options[key];
  const config = resolveWhatsAppConfig(section);
  if (!options.stateDir) {
    throw new ColloquyError(
      'CONFIG_INVALID',
      'createWhatsAppPlugin needs a stateDir (where the WhatsApp link is stored).',
      {
        issues: [{ path: 'channels.whatsapp.stateDir', expected: 'string', got: 'undefined' }],
      },
    );
  }
  return new WhatsAppChannel(options, config);
}

class WhatsAppChannel implements WhatsAppPlugin {
  readonly id = 'whatsapp' as const;
  readonly capabilities: ChannelCapabilities;

  private readonly accountId: string;
  private readonly stateDir: string;
  private readonly authDir: string;
  private readonly fs: StateFs;
  private readonly makeSocket: WhatsAppSocketFactory;
  private readonly allowFrom: Set<string>;

  private ctx: ChannelContext | undefined;
  private log: Logger = silentLogger;
  private auth: AtomicAuthState | undefined;
  private keys: SignalKeyStore | undefined;
  private peers: PeerMap | undefined;
  private ledger: InboundLedger | undefined;
  /** What the bot sent, kept across restarts for Baileys' retry `getMessage`. */
  private sentStore: SentMessageStore | undefined;
  /** Group metadata for Baileys' `cachedGroupMetadata`. */
  private readonly groupCache = new GroupCache();
  private readonly groupFetches = new Set<string>();

  private sock: WhatsAppSocketLike | undefined;
  private listeners: Listener[] = [];
  private frameListener: (() => void) | undefined;
  private state: ChannelStatus['state'] = 'disconnected';
  private detail: string | undefined;
  private qr: string | undefined;
  private started = false;
  private stopped = false;
  private stopping: Promise<void> | undefined;
  private attempt = 0;
  private reconnectTimer: NodeJS.Timeout | undefined;
  /** True while this instance may hold the socket (always, without a cluster). */
  private leaseHeld = false;
  private lease: ChannelLease | undefined;
  private watchdog: NodeJS.Timeout | undefined;
  private lastActivityAt = 0;
  private openWaiters = new Set<{
    resolve: (s: WhatsAppSocketLike) => void;
    reject: (e: ColloquyError) => void;
  }>();
  private inbound: Promise<void> = Promise.resolve();
  private readonly typing: TypingIndicator;
  /** Per chat: the latest message that addressed the bot, quoted by the next reply. */
  private readonly awaitingReply = new Map<string, { id: string; at: number }>();

  /** Recent messages by id (received and sent), for quoting and for Baileys' retry `getMessage`. */
  private readonly recent = new BoundedMap<string, WAMessage>(1000);
  /** Ids of messages this plugin sent: their echoes are ignored. */
  private readonly sentIds = new BoundedSet<string>(2000);
  private readonly seenIds = new BoundedSet<string>(2000);

  constructor(
    private readonly options: WhatsAppPluginOptions,
    private readonly config: WhatsAppConfig,
  ) {
    this.accountId = options.accountId ?? 'default';
    this.stateDir = options.stateDir;
    this.authDir = join(this.stateDir, 'auth');
    this.fs = options.fs ?? nodeStateFs;
    this.makeSocket = options.makeSocket ?? makeBaileysSocket;
    this.allowFrom = new Set(
      config.allowFrom.map(normalizePeerEntry).filter((e): e is string => e !== undefined),
    );
    this.typing = new TypingIndicator(
      (type, jid) => this.presence(type, jid),
      options.typingTimeoutMs ?? 15_000,
    );
    this.capabilities = {
      threads: false,
      edits: false,
      reactions: false,
      media: false,
      typing: true,
      maxTextLength: config.chunkLength,
      markdown: 'whatsapp',
    };
  }

  // --- lifecycle ---

  async start(ctx: ChannelContext): Promise<void> {
    if (this.started) return;
    this.started = true;
    this.stopped = false;
    this.ctx = ctx;
    this.log = ctx.log.child({ channel: 'whatsapp', accountId: this.accountId });
    this.setState('starting', 'loading credentials');
    try {
      await mkdir(this.stateDir, { recursive: true });
      this.auth = await useAtomicAuthState(this.authDir, { fs: this.fs });
      this.peers = await PeerMap.load(this.stateDir, this.log, this.fs);
      this.ledger = await InboundLedger.load(this.stateDir, this.log, this.fs);
      this.sentStore = await SentMessageStore.load(this.stateDir, this.log, this.fs);
      this.peers.learnAll(this.options.contacts ?? {});
      await importLegacyPairingFile(this.stateDir, this.accountId, ctx.pairing, this.log, this.fs);
    } catch (error) {
      const failure = isColloquyError(error)
        ? error
        : new ColloquyError(
            'CHANNEL_ERROR',
            `WhatsApp could not load its state from ${this.stateDir}: ${(error as Error).message}. Check that the folder is writable.`,
            { stateDir: this.stateDir },
            { cause: error },
          );
      this.setState('error', failure.message);
      this.started = false;
      throw failure;
    }
    this.keys = makeCacheableSignalKeyStore(
      this.auth.state.keys,
      toBaileysLogger(this.log.child({ part: 'keys' })),
    );
    ctx.signal.addEventListener('abort', () => void this.stop(), { once: true });
    const staleAfter = this.options.staleAfterMs ?? 180_000;
    if (staleAfter > 0) {
      this.watchdog = setInterval(
        () => this.checkHealth(staleAfter),
        Math.min(30_000, Math.max(10, staleAfter / 3)),
      );
      this.watchdog.unref();
    }
    if (ctx.lease) void this.connectUnderLease(ctx.lease);
    else {
      this.leaseHeld = true;
      this.connect();
    }
  }

  /**
   * Connects only while this instance holds the account's lease (`whatsapp:<accountId>`): one
   * socket per account across instances. When the lease is lost the socket is closed at once and
   * the lease is waited for again.
   */
  private async connectUnderLease(lease: NonNullable<ChannelContext['lease']>): Promise<void> {
    const name = `whatsapp:${this.accountId}`;
    const stopSignal = this.ctx?.signal;
    while (!this.stopped) {
      this.setState('standby', 'waiting for the lease: another instance holds this WhatsApp account');
      let held: ChannelLease;
      try {
        held = await lease(name, stopSignal);
      } catch (error) {
        if (!this.stopped)
          this.setState('error', `WhatsApp could not get its lease: ${(error as Error).message}`);
        return;
      }
      if (this.stopped) {
        await held.release();
        return;
      }
      this.lease = held;
      this.leaseHeld = true;
      this.connect();
      await new Promise<void>((resolve) =>
        held.lost.addEventListener('abort', () => resolve(), { once: true }),
      );
      this.leaseHeld = false;
      this.lease = undefined;
      if (this.stopped) return;
      this.log.warn({ lease: name }, 'WhatsApp: the lease was lost; closing the socket');
      clearTimeout(this.reconnectTimer);
      const sock = this.sock;
      this.detach();
      try {
        sock?.end(undefined);
      } catch {
        // already closed
      }
    }
  }

  stop(): Promise<void> {
    if (this.stopping) return this.stopping;
    if (!this.started) return Promise.resolve();
    this.stopping = this.shutdown().finally(() => {
      this.stopping = undefined;
    });
    return this.stopping;
  }

  /** Stops once; concurrent `stop()` calls (the abort signal, then the runtime) share it. */
  private async shutdown(): Promise<void> {
    if (this.state === 'connected') this.ledger?.stillConnected(Date.now());
    this.stopped = true;
    this.started = false;
    clearTimeout(this.reconnectTimer);
    clearInterval(this.watchdog);
    this.typing.clear();
    const sock = this.sock;
    this.detach();
    try {
      sock?.end(undefined);
    } catch (error) {
      this.log.debug({ err: (error as Error).message }, 'closing the WhatsApp socket failed');
    }
    this.failWaiters(
      new ColloquyError('ABORTED', 'The WhatsApp channel stopped before the message could be sent.'),
    );
    await this.inbound.catch(() => {});
    await this.lease?.release();
    this.lease = undefined;
    this.leaseHeld = false;
    await this.auth?.flush();
    await this.peers?.flush();
    await this.ledger?.flush();
    await this.sentStore?.flush();
    if (this.state !== 'logged-out' && this.state !== 'error') this.setState('disconnected', 'stopped');
  }

  async logout(): Promise<void> {
    const sock = this.sock;
    if (sock)
      await sock
        .logout('unlinked by the owner')
        .catch((e: unknown) => this.log.warn({ err: String(e) }, 'logout failed'));
    await this.stop();
    await resetWhatsAppAuth(this.stateDir);
    this.setState('logged-out', 'Unlinked. Start the channel again to link a device by QR code.');
  }

  status(): ChannelStatus {
    const status: ChannelStatus = { state: this.state };
    const detail = this.describe();
    if (detail !== undefined) status.detail = detail;
    const account: { accountId: string; state: string; detail?: string } = {
      accountId: this.accountId,
      state: this.qr ? 'awaiting-qr' : this.state,
    };
    if (this.qr) account.detail = this.qr;
    else if (detail !== undefined) account.detail = detail;
    status.accounts = [account];
    return status;
  }

  latestQr(): string | undefined {
    return this.qr;
  }

  // --- connection ---

  private connect(): void {
    if (this.stopped || !this.leaseHeld || !this.auth || !this.keys) return;
    const auth = this.auth;
    let sock: WhatsAppSocketLike;
    try {
      sock = this.makeSocket({
        auth: { creds: auth.state.creds, keys: this.keys },
        logger: toBaileysLogger(this.log.child({ part: 'baileys' })),
        browser: ['Colloquy', 'Desktop', '1.0.0'],
        markOnlineOnConnect: false,
        syncFullHistory: false,
        shouldSyncHistoryMessage: () => false,
        getMessage: async (key) =>
          key.id ? (this.recent.get(key.id)?.message ?? this.sentStore?.get(key.id)) : undefined,
        cachedGroupMetadata: async (jid) => this.groupCache.get(jid),
      });
    } catch (error) {
      this.scheduleReconnect(`could not create the socket: ${(error as Error).message}`, false);
      return;
    }
    this.sock = sock;
    this.touch();
    this.on(sock, 'connection.update', (update) => this.onConnectionUpdate(sock, update));
    this.on(sock, 'creds.update', () => {
      this.touch();
      auth.saveCreds().catch((error: unknown) => {
        this.log.error(
          { err: (error as Error).message },
          'saving WhatsApp credentials failed; the previous ones are kept',
        );
      });
    });
    this.on(sock, 'messages.upsert', (upsert) => this.onUpsert(upsert));
    this.on(sock, 'contacts.upsert', (contacts) => this.learnContacts(contacts));
    this.on(sock, 'contacts.update', (contacts) => this.learnContacts(contacts));
    this.on(sock, 'groups.upsert', (groups) => {
      for (const meta of groups) this.rememberGroup(meta);
    });
    this.on(sock, 'groups.update', (changes) => {
      for (const change of changes) this.groupCache.update(change);
    });
    this.on(sock, 'group-participants.update', ({ id }) => this.groupCache.invalidate(id));
    this.on(sock, 'lid-mapping.update', ({ lid, pn }) => {
      this.touch();
      this.peers?.learn(lid, pn);
    });
    if (sock.ws) {
      this.frameListener = () => this.touch();
      sock.ws.on('frame', this.frameListener);
    }
  }

  private on<E extends keyof WhatsAppEventMap>(
    sock: WhatsAppSocketLike,
    event: E,
    fn: (arg: WhatsAppEventMap[E]) => void,
  ): void {
    sock.ev.on(event, fn);
    this.listeners.push({ event, fn: fn as (arg: never) => void });
  }

  /** Removes this plugin's listeners from the current socket and forgets it. */
  private detach(): void {
    const sock = this.sock;
    if (sock) {
      for (const { event, fn } of this.listeners) sock.ev.off(event, fn as (arg: unknown) => void);
      if (this.frameListener) sock.ws?.off('frame', this.frameListener);
    }
    this.listeners = [];
    this.frameListener = undefined;
    this.sock = undefined;
  }

  private onConnectionUpdate(sock: WhatsAppSocketLike, update: BaileysEventMap['connection.update']): void {
    if (sock !== this.sock) return;
    this.touch();
    if (update.qr) {
      this.qr = update.qr;
      this.setState('starting', 'waiting for the QR code to be scanned');
      if (this.options.qrOutput !== false) printQr(update.qr, this.options.qrOutput ?? process.stdout);
      try {
        this.options.onQr?.(update.qr);
      } catch (error) {
        this.log.warn({ err: (error as Error).message }, 'onQr callback threw');
      }
    }
    if (update.connection === 'open') {
      this.qr = undefined;
      this.attempt = 0;
      const me = this.me();
      if (me?.lid) this.peers?.learn(me.lid, me.id);
      this.ledger?.opened(Date.now());
      this.setState('connected', undefined);
      this.log.info({ user: me?.id }, 'WhatsApp connected');
      for (const waiter of this.openWaiters) waiter.resolve(sock);
      this.openWaiters.clear();
    } else if (update.connection === 'close') {
      this.onClose(update.lastDisconnect?.error);
    }
  }

  private onClose(error: unknown): void {
    if (this.state === 'connected') this.ledger?.stillConnected(Date.now());
    this.detach();
    // A QR code belongs to the socket that showed it: the next socket shows a new one.
    this.qr = undefined;
    if (this.stopped) return;
    const verdict = classifyClose(error);
    if (verdict.action === 'logged-out' || verdict.action === 'relink') {
      const relink =
        `To re-link: stop the bot, delete ${this.authDir} (or call resetWhatsAppAuth), start it again and ` +
        'scan the new QR code.';
      const message =
        verdict.action === 'logged-out'
          ? `WhatsApp logged this device out (unlinked on the phone, or the link expired). ${relink}`
          : `${verdict.reason}; reconnecting cannot fix this. ${relink}`;
      this.setState(verdict.action === 'logged-out' ? 'logged-out' : 'error', message);
      this.log.error({ code: verdict.code }, message);
      this.failWaiters(new ColloquyError('UNAUTHORIZED', message, { code: verdict.code }));
      return;
    }
    if (verdict.action === 'stop') {
      this.setState('error', `WhatsApp stopped: ${verdict.reason}.`);
      this.log.error({ code: verdict.code }, verdict.reason);
      this.failWaiters(
        new ColloquyError('CHANNEL_ERROR', `WhatsApp stopped: ${verdict.reason}.`, { code: verdict.code }),
      );
      return;
    }
    this.scheduleReconnect(verdict.reason, verdict.immediate);
  }

  private scheduleReconnect(reason: string, immediate: boolean): void {
    if (this.stopped) return;
    const delay = immediate ? 0 : backoffDelay(this.attempt, this.options.reconnect);
    if (!immediate) this.attempt += 1;
    this.setState(
      'reconnecting',
      `${reason}; reconnecting in ${Math.round(delay / 100) / 10} s (attempt ${this.attempt})`,
    );
    this.log.warn({ delayMs: delay, attempt: this.attempt }, `WhatsApp connection closed: ${reason}`);
    clearTimeout(this.reconnectTimer);
    this.reconnectTimer = setTimeout(() => this.connect(), delay);
  }

  /** Replaces a connected socket that has been silent for too long. */
  private checkHealth(staleAfterMs: number): void {
    if (this.state !== 'connected' || !this.sock) return;
    const silentFor = Date.now() - this.lastActivityAt;
    if (silentFor < staleAfterMs) return;
    const sock = this.sock;
    const error = Object.assign(new Error(`no frame from WhatsApp for ${Math.round(silentFor / 1000)} s`), {
      output: { statusCode: 408 },
    });
    this.detach();
    try {
      sock.end(error);
    } catch {
      // The socket is being replaced anyway.
    }
    this.onClose(error);
  }

  private touch(): void {
    this.lastActivityAt = Date.now();
  }

  private setState(state: ChannelStatus['state'], detail: string | undefined): void {
    this.state = state;
    this.detail = detail;
  }

  private describe(): string | undefined {
    if (this.qr) {
      return `Link WhatsApp: scan the QR code printed in the terminal (WhatsApp > Settings > Linked devices). QR: ${this.qr}`;
    }
    if (this.state === 'connected') {
      const me = this.me();
      const who = me?.id ? `+${jidUser(me.id)}` : 'linked account';
      const ago = Math.max(0, Math.round((Date.now() - this.lastActivityAt) / 1000));
      return `connected as ${who}; last socket activity ${ago} s ago`;
    }
    return this.detail;
  }

  private me(): Contact | undefined {
    return this.sock?.user ?? this.auth?.state.creds.me;
  }

  private failWaiters(error: ColloquyError): void {
    for (const waiter of this.openWaiters) waiter.reject(error);
    this.openWaiters.clear();
  }

  /** The open socket, waiting (bounded) for a reconnect in progress. */
  private whenOpen(): Promise<WhatsAppSocketLike> {
    if (this.state === 'connected' && this.sock) return Promise.resolve(this.sock);
    if (!this.started || this.stopped) {
      return Promise.reject(
        new ColloquyError('CHANNEL_ERROR', 'The WhatsApp channel is not running; start it first.'),
      );
    }
    if (this.state === 'logged-out' || this.state === 'error') {
      return Promise.reject(new ColloquyError('CHANNEL_ERROR', this.detail ?? 'WhatsApp is not connected.'));
    }
    const timeoutMs = this.options.sendTimeoutMs ?? 30_000;
    return new Promise((resolve, reject) => {
      const waiter = {
        resolve: (s: WhatsAppSocketLike) => {
          clearTimeout(timer);
          resolve(s);
        },
        reject: (e: ColloquyError) => {
          clearTimeout(timer);
          reject(e);
        },
      };
      const timer = setTimeout(() => {
        this.openWaiters.delete(waiter);
        reject(
          new ColloquyError(
            'CHANNEL_ERROR',
            `WhatsApp is not connected (${this.state}${this.detail ? `: ${this.detail}` : ''}); the message was not sent. Check \`colloquy status\`.`,
            { state: this.state },
          ),
        );
      }, timeoutMs);
      this.openWaiters.add(waiter);
    });
  }

  // --- inbound ---

  private onUpsert(upsert: BaileysEventMap['messages.upsert']): void {
    this.touch();
    // `notify` is a live message. `append` is a message that arrived while this device was offline,
    // our own send from another device, or a notification: only the first kind is answered.
    for (const msg of upsert.messages) {
      if (upsert.type !== 'notify' && !this.arrivedWhileOffline(msg)) continue;
      this.inbound = this.inbound
        .then(() => this.handleMessage(msg))
        .catch((error: unknown) => {
          this.log.error(
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
    return at !== undefined && this.ledger?.isSinceLastConnection(at) === true;
  }

  private learnContacts(contacts: readonly Partial<Contact>[]): void {
    this.touch();
    this.peers?.learnFromContacts(contacts);
  }

  private async handleMessage(msg: WAMessage): Promise<void> {
    const ctx = this.ctx;
    const peers = this.peers;
    const key = msg.key;
    const id = key?.id;
    const remoteJid = key?.remoteJid;
    if (!ctx || !peers || !id || !remoteJid) return;
    if (this.seenIds.has(id) || this.sentIds.has(id) || this.ledger?.has(id)) return;
    this.seenIds.add(id);
    peers.learnFromKey(key);
    const sender = jidKind(remoteJid) === 'group' ? key.participant : remoteJid;
    if (sender) await this.resolveLid(sender);

    const kind = jidKind(remoteJid);
    if (kind === 'other') return; // statuses, broadcast lists, newsletters
    if (kind === 'group') this.fetchGroup(remoteJid);
    const me = this.me();
    const isSelfChat = kind !== 'group' && isOwnJid(remoteJid, me);
    if (this.config.selfChatMode && !isSelfChat) return;
    if (key.fromMe && !(this.config.selfChatMode && isSelfChat)) return;

    const content = readMessageContent(msg);
    if (!content) return;

    let inbound: InboundMessage;
    if (kind === 'group') {
      const participant = key.participant ?? '';
      if (isOwnJid(participant, me)) return;
      inbound = toInboundMessage({
        msg,
        content,
        accountId: this.accountId,
        chat: { type: 'group', id: remoteJid },
        senderId: peers.peerIdFor(participant) ?? participant,
        mentionsBot:
          !this.requiresMention(remoteJid) || addressesBot(content, me, (id) => this.sentIds.has(id)),
      });
    } else {
      const peerId = peers.peerIdFor(remoteJid);
      if (!peerId) return;
      peers.rememberJid(peerId, remoteJid);
      if (!isSelfChat && !(await this.mayTalk(peerId, remoteJid, msg.pushName ?? undefined))) return;
      inbound = toInboundMessage({
        msg,
        content,
        accountId: this.accountId,
        chat: { type: 'direct', id: peerId },
        senderId: peerId,
        mentionsBot: true,
      });
    }

    this.recent.set(id, msg);
    if (inbound.mentionsBot) {
      this.awaitingReply.set(remoteJid, { id, at: Date.now() });
      await this.downloadMedia(msg, inbound);
    }
    await ctx.receive(inbound);
    this.ledger?.record(id, Date.now());
    if (this.config.readReceipts && inbound.mentionsBot) {
      this.sock?.readMessages([key]).catch((error: unknown) => {
        this.log.debug({ err: (error as Error).message }, 'read receipt failed');
      });
    }
  }

  /**
   * Downloads the images, voice notes, audio and documents of a message addressed to the bot into
   * `<stateDir>/media/` (up to `maxMediaBytes` each) and points their `ref` at the saved file.
   * What is not downloaded keeps its `whatsapp:` ref, and the text says why.
   */
  private async downloadMedia(msg: WAMessage, inbound: InboundMessage): Promise<void> {
    const sock = this.sock;
    const max = this.config.maxMediaBytes;
    if (!sock?.downloadMedia || max <= 0 || !inbound.media) return;
    const dir = join(this.stateDir, 'media');
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
          this.log.warn({ err: (error as Error).message, id: inbound.messageId }, 'media download failed');
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
    this.peers?.learnFromContacts(meta.participants ?? []);
  }

  /** Fills the group cache in the background the first time a group is seen. */
  private fetchGroup(jid: string): void {
    const sock = this.sock;
    if (!sock?.groupMetadata || this.groupCache.has(jid) || this.groupFetches.has(jid)) return;
    this.groupFetches.add(jid);
    sock
      .groupMetadata(jid)
      .then((meta) => this.rememberGroup(meta))
      .catch((error: unknown) => {
        this.log.debug({ err: (error as Error).message, jid }, 'group metadata fetch failed');
      })
      .finally(() => this.groupFetches.delete(jid));
  }

  /**
   * Asks Baileys' LID store for the phone number of a LID the peer map does not know yet, so a
   * person allowlisted by number who writes from a LID is recognised and keeps one session.
   */
  private async resolveLid(jid: string): Promise<void> {
    const peers = this.peers;
    const store = this.sock?.signalRepository?.lidMapping;
    if (!peers || !store || jidKind(jid) !== 'lid' || peers.phoneForLid(jid)) return;
    try {
      peers.learn(jid, await store.getPNForLID(jid));
    } catch (error) {
      this.log.debug({ err: (error as Error).message, jid }, 'LID lookup failed');
    }
  }

  private requiresMention(groupJid: string): boolean {
    return (
      this.config.groups[groupJid]?.requireMention ??
      this.config.groups['*']?.requireMention ??
      this.config.requireMentionByDefault
    );
  }

  /** The DM policy: open, allowlist, or pairing (newcomers get a code the owner approves). */
  private async mayTalk(peerId: string, jid: string, name: string | undefined): Promise<boolean> {
    const policy = this.config.dmPolicy;
    if (policy === 'open') return true;
    const aliases = new Set([
      peerId,
      ...(this.peers?.aliasesOf(jid) ?? []).map((j) => normalizePeerEntry(j)),
    ]);
    for (const alias of aliases) if (alias && this.allowFrom.has(alias)) return true;
    if (policy === 'allowlist' || !this.ctx) {
      this.log.debug({ peerId }, 'direct message from someone not in allowFrom ignored');
      return false;
    }
    const pairing = this.ctx.pairing;
    if (await pairing.isApproved(this.accountId, peerId)) return true;
    const { record, created } = await pairing.request({
      accountId: this.accountId,
      peerId,
      meta: { jid },
      ...(name !== undefined ? { displayName: name } : {}),
    });
    if (record.status === 'approved') return true;
    const code = record.code ?? '';
    if (created) {
      this.log.info(
        { peerId, code },
        'WhatsApp pairing requested; approve it with `colloquy pairing approve whatsapp <code>`',
      );
      const text = (this.options.pairingMessage ?? defaultPairingMessage)(code);
      const sock = this.sock;
      if (sock) {
        const sent = await sock.sendMessage(jid, { text }).catch((error: unknown) => {
          this.log.warn({ err: (error as Error).message }, 'could not send the pairing code');
          return undefined;
        });
        if (sent?.key.id) {
          this.sentIds.add(sent.key.id);
          this.sentStore?.record(sent.key.id, sent.message);
        }
      }
    }
    return false;
  }

  // --- outbound ---

  async send(to: DeliveryContext, message: OutboundMessage): Promise<SendResult> {
    const peers = this.peers;
    if (!peers)
      throw new ColloquyError('CHANNEL_ERROR', 'The WhatsApp channel is not running; start it first.');
    const jid = peers.jidFor(to.to);
    const chunks = renderMessages(message.text, whatsapp, {
      format: message.format ?? 'markdown',
      limit: this.config.chunkLength,
    });
    if (chunks.length === 0) {
      throw new ColloquyError(
        'INVALID_ARGUMENT',
        'Cannot send an empty WhatsApp message; give it some text.',
        { to: to.to },
      );
    }
    const awaiting = this.awaitingReply.get(jid);
    this.awaitingReply.delete(jid);
    const fresh = awaiting && Date.now() - awaiting.at < QUOTE_WINDOW_MS ? awaiting.id : undefined;
    const quoted = this.quoteFor(jid, message.replyToMessageId ?? fresh);
    const ids: string[] = [];
    try {
      for (const [index, chunk] of chunks.entries()) {
        const options = index === 0 && quoted ? { quoted } : undefined;
        ids.push(await this.sendOne(jid, chunk, options));
      }
    } catch (error) {
      throw new ColloquyError(
        'CHANNEL_ERROR',
        `WhatsApp send to ${jid} failed after ${ids.length} of ${chunks.length} messages: ${(error as Error).message}`,
        { jid, sentMessageIds: ids, code: closeStatusCode(error) },
        { cause: error },
      );
    } finally {
      this.typing.stop(jid);
    }
    const [first] = ids;
    if (first === undefined)
      throw new ColloquyError('CHANNEL_ERROR', `WhatsApp returned no message id for ${jid}.`);
    return { messageId: first, messageIds: ids };
  }

  /** Sends one message; if the link dropped mid-send, waits for the reconnect and tries once more. */
  private async sendOne(
    jid: string,
    text: string,
    options: { quoted: WAMessage } | undefined,
  ): Promise<string> {
    for (let attempt = 0; ; attempt++) {
      const sock = await this.whenOpen();
      try {
        const sent = await sock.sendMessage(jid, { text }, options);
        const id = sent?.key.id;
        if (!id) throw new Error('WhatsApp returned no message id');
        this.sentIds.add(id);
        // Kept (also on disk) so Baileys can re-encrypt it when a recipient's device asks for a retry.
        this.recent.set(id, sent);
        this.sentStore?.record(id, sent.message);
        this.touch();
        return id;
      } catch (error) {
        const linkDropped = this.sock !== sock || this.state !== 'connected';
        if (attempt > 0 || !linkDropped || isColloquyError(error)) throw error;
        this.log.warn(
          { err: (error as Error).message },
          'WhatsApp send failed while the link dropped; retrying once',
        );
      }
    }
  }

  private quoteFor(jid: string, replyTo: string | undefined): WAMessage | undefined {
    if (!replyTo) return undefined;
    const mode = this.options.quoteReplies ?? 'groups';
    if (mode === 'off' || (mode === 'groups' && jidKind(jid) !== 'group')) return undefined;
    return this.recent.get(replyTo);
  }

  async sendTyping(to: DeliveryContext): Promise<void> {
    if (!this.peers || this.state !== 'connected' || !this.sock) return;
    await this.typing.start(this.peers.jidFor(to.to));
  }

  private async presence(type: 'composing' | 'paused', jid: string): Promise<void> {
    const sock = this.sock;
    if (!sock || this.state !== 'connected') return;
    await sock.sendPresenceUpdate(type, jid).catch((error: unknown) => {
      this.log.debug({ err: (error as Error).message }, 'presence update failed');
    });
  }
}
