import {
  backoffDelay,
  type ChannelContext,
  type ChannelLease,
  type ChannelStatus,
  ColloquyError,
} from '@colloquy/core';
import type { BaileysEventMap, Contact, GroupMetadata, SignalKeyStore } from '@whiskeysockets/baileys';
import type { AtomicAuthState } from './auth-state.js';
import { makeBaileysSocket } from './baileys.js';
import { toBaileysLogger } from './baileys-logger.js';
import type { ChannelState } from './channel-state.js';
import { classifyClose } from './close-reason.js';
import { jidUser } from './jid.js';
import { printQr } from './qr.js';
import type { WhatsAppEventMap, WhatsAppSocketFactory, WhatsAppSocketLike } from './socket.js';

/**
 * How long a send waits for a reconnect in progress (a blip) before it fails as retryable, so that
 * a longer outage leaves the reply to the runtime's delivery outbox (shown in `colloquy status`,
 * kept across restarts).
 */
const DEFAULT_SEND_TIMEOUT_MS = 5000;

type Listener = { event: keyof WhatsAppEventMap; fn: (arg: never) => void };

/** Registers a listener on a socket; the connection removes it when the socket goes away. */
export type SocketListen = <E extends keyof WhatsAppEventMap>(
  event: E,
  fn: (arg: WhatsAppEventMap[E]) => void,
) => void;

/** What the connection needs from the rest of the channel. */
export interface ConnectionHooks {
  /** Subscribes the message, contact and group listeners to a new socket. */
  subscribe(listen: SocketListen): void;
  /** Cached group metadata for Baileys' `cachedGroupMetadata`. */
  groupMetadata(jid: string): GroupMetadata | undefined;
}

/**
 * The link to WhatsApp: one Baileys socket at a time (under the account's lease in a cluster),
 * reconnected with backoff, replaced when silent for too long, and the state and QR code it reports.
 */
export class WhatsAppConnection {
  /** The open (or opening) socket. */
  sock: WhatsAppSocketLike | undefined;
  state: ChannelStatus['state'] = 'disconnected';
  detail: string | undefined;
  /** The QR string waiting to be scanned. */
  qr: string | undefined;
  started = false;
  stopped = false;

  private readonly makeSocket: WhatsAppSocketFactory;
  private auth: AtomicAuthState | undefined;
  private keys: SignalKeyStore | undefined;
  private listeners: Listener[] = [];
  private frameListener: (() => void) | undefined;
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

  constructor(
    private readonly shared: ChannelState,
    private readonly authDir: string,
    private readonly hooks: ConnectionHooks,
  ) {
    this.makeSocket = shared.options.makeSocket ?? makeBaileysSocket;
  }

  // --- lifecycle ---

  /** Opens the link with loaded credentials: at once, or once the lease is held in a cluster. */
  open(ctx: ChannelContext, auth: AtomicAuthState, keys: SignalKeyStore): void {
    this.auth = auth;
    this.keys = keys;
    const staleAfter = this.shared.options.staleAfterMs ?? 180_000;
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
    const name = `whatsapp:${this.shared.accountId}`;
    const stopSignal = this.shared.ctx?.signal;
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
      this.shared.log.warn({ lease: name }, 'WhatsApp: the lease was lost; closing the socket');
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

  /** Stops reconnecting and watching: the first step of a shutdown. */
  halt(): void {
    if (this.state === 'connected') this.shared.ledger?.stillConnected(Date.now());
    this.stopped = true;
    this.started = false;
    clearTimeout(this.reconnectTimer);
    clearInterval(this.watchdog);
  }

  /** Closes the socket and fails the sends waiting for it. */
  closeSocket(): void {
    const sock = this.sock;
    this.detach();
    try {
      sock?.end(undefined);
    } catch (error) {
      this.shared.log.debug({ err: (error as Error).message }, 'closing the WhatsApp socket failed');
    }
    // Nothing was sent: the runtime keeps the reply for the next process.
    this.failWaiters(
      new ColloquyError('ABORTED', 'The WhatsApp channel stopped before the message could be sent.', {
        retryable: true,
      }),
    );
  }

  /** Releases the cluster lease, if held. */
  async releaseLease(): Promise<void> {
    await this.lease?.release();
    this.lease = undefined;
    this.leaseHeld = false;
  }

  // --- connection ---

  private connect(): void {
    if (this.stopped || !this.leaseHeld || !this.auth || !this.keys) return;
    const auth = this.auth;
    const shared = this.shared;
    let sock: WhatsAppSocketLike;
    try {
      sock = this.makeSocket({
        auth: { creds: auth.state.creds, keys: this.keys },
        logger: toBaileysLogger(shared.log.child({ part: 'baileys' })),
        browser: ['Colloquy', 'Desktop', '1.0.0'],
        markOnlineOnConnect: false,
        syncFullHistory: false,
        shouldSyncHistoryMessage: () => false,
        getMessage: async (key) =>
          key.id ? (shared.recent.get(key.id)?.message ?? shared.sentStore?.get(key.id)) : undefined,
        cachedGroupMetadata: async (jid) => this.hooks.groupMetadata(jid),
        ...(shared.config.webSocketUrl === undefined ? {} : { waWebSocketUrl: shared.config.webSocketUrl }),
      });
    } catch (error) {
      this.scheduleReconnect(`could not create the socket: ${(error as Error).message}`, false);
      return;
    }
    this.sock = sock;
    this.touch();
    const listen: SocketListen = (event, fn) => this.on(sock, event, fn);
    listen('connection.update', (update) => this.onConnectionUpdate(sock, update));
    listen('creds.update', () => {
      this.touch();
      auth.saveCreds().catch((error: unknown) => {
        shared.log.error(
          { err: (error as Error).message },
          'saving WhatsApp credentials failed; the previous ones are kept',
        );
      });
    });
    this.hooks.subscribe(listen);
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
    const { options, log } = this.shared;
    this.touch();
    if (update.qr) {
      this.qr = update.qr;
      this.setState('starting', 'waiting for the QR code to be scanned');
      if (options.qrOutput !== false) printQr(update.qr, options.qrOutput ?? process.stdout);
      try {
        options.onQr?.(update.qr);
      } catch (error) {
        log.warn({ err: (error as Error).message }, 'onQr callback threw');
      }
    }
    if (update.connection === 'open') {
      this.qr = undefined;
      this.attempt = 0;
      const me = this.me();
      if (me?.lid) this.shared.peers?.learn(me.lid, me.id);
      this.shared.ledger?.opened(Date.now());
      this.setState('connected', undefined);
      log.info({ user: me?.id }, 'WhatsApp connected');
      for (const waiter of this.openWaiters) waiter.resolve(sock);
      this.openWaiters.clear();
    } else if (update.connection === 'close') {
      this.onClose(update.lastDisconnect?.error);
    }
  }

  private onClose(error: unknown): void {
    const log = this.shared.log;
    if (this.state === 'connected') this.shared.ledger?.stillConnected(Date.now());
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
      log.error({ code: verdict.code }, message);
      this.failWaiters(new ColloquyError('UNAUTHORIZED', message, { code: verdict.code }));
      return;
    }
    if (verdict.action === 'stop') {
      this.setState('error', `WhatsApp stopped: ${verdict.reason}.`);
      log.error({ code: verdict.code }, verdict.reason);
      this.failWaiters(
        new ColloquyError('CHANNEL_ERROR', `WhatsApp stopped: ${verdict.reason}.`, { code: verdict.code }),
      );
      return;
    }
    this.scheduleReconnect(verdict.reason, verdict.immediate);
  }

  private scheduleReconnect(reason: string, immediate: boolean): void {
    if (this.stopped) return;
    const delay = immediate ? 0 : backoffDelay(this.attempt, this.shared.options.reconnect);
    if (!immediate) this.attempt += 1;
    this.setState(
      'reconnecting',
      `${reason}; reconnecting in ${Math.round(delay / 100) / 10} s (attempt ${this.attempt})`,
    );
    this.shared.log.warn({ delayMs: delay, attempt: this.attempt }, `WhatsApp connection closed: ${reason}`);
    clearTimeout(this.reconnectTimer);
    this.reconnectTimer = setTimeout(() => this.connect(), delay);
  }

  /** Replaces a connected socket that has been silent for too long. */
  private checkHealth(staleAfterMs: number): void {
    if (this.state !== 'connected' || !this.sock) return;
    const silentFor = performance.now() - this.lastActivityAt;
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

  /** Notes activity on the link (the watchdog replaces a socket silent for too long). */
  touch(): void {
    this.lastActivityAt = performance.now();
  }

  setState(state: ChannelStatus['state'], detail: string | undefined): void {
    this.state = state;
    this.detail = detail;
  }

  /** The state in words for `status()`: the QR to scan, who is connected, or what went wrong. */
  describe(): string | undefined {
    if (this.qr) {
      return `Link WhatsApp: scan the QR code printed in the terminal (WhatsApp > Settings > Linked devices). QR: ${this.qr}`;
    }
    if (this.state === 'connected') {
      const me = this.me();
      const who = me?.id ? `+${jidUser(me.id)}` : 'linked account';
      const ago = Math.max(0, Math.round((performance.now() - this.lastActivityAt) / 1000));
      return `connected as ${who}; last socket activity ${ago} s ago`;
    }
    return this.detail;
  }

  /** The linked account. */
  me(): Contact | undefined {
    return this.sock?.user ?? this.auth?.state.creds.me;
  }

  private failWaiters(error: ColloquyError): void {
    for (const waiter of this.openWaiters) waiter.reject(error);
    this.openWaiters.clear();
  }

  /** The open socket, waiting (bounded) for a reconnect in progress. */
  whenOpen(): Promise<WhatsAppSocketLike> {
    if (this.state === 'connected' && this.sock) return Promise.resolve(this.sock);
    if (!this.started || this.stopped) {
      return Promise.reject(
        new ColloquyError('CHANNEL_ERROR', 'The WhatsApp channel is not running; start it first.'),
      );
    }
    if (this.state === 'logged-out' || this.state === 'error') {
      return Promise.reject(new ColloquyError('CHANNEL_ERROR', this.detail ?? 'WhatsApp is not connected.'));
    }
    const timeoutMs = this.shared.options.sendTimeoutMs ?? DEFAULT_SEND_TIMEOUT_MS;
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
            // Still reconnecting: the runtime's delivery outbox sends it again later.
            { state: this.state, retryable: true },
          ),
        );
      }, timeoutMs);
      this.openWaiters.add(waiter);
    });
  }
}
