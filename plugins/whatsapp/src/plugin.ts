import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import {
  type ChannelCapabilities,
  type ChannelContext,
  type ChannelStatus,
  ColloquyError,
  type DeliveryContext,
  isColloquyError,
  type OutboundMessage,
  type SendResult,
  sectionError,
  silentLogger,
} from '@colloquy/core';
import { nodeStateFs, type StateFs } from './atomic-file.js';
import { type AtomicAuthState, resetWhatsAppAuth, useAtomicAuthState } from './auth-state.js';
import { makeCacheableSignalKeyStore } from './baileys.js';
import { toBaileysLogger } from './baileys-logger.js';
import { type ChannelState, createChannelState } from './channel-state.js';
import { resolveWhatsAppConfig } from './config.js';
import { WhatsAppConnection } from './connection.js';
import { DmAccess } from './dm-access.js';
import { WhatsAppInbound } from './inbound.js';
import { InboundLedger } from './inbound-ledger.js';
import { importLegacyPairingFile } from './legacy-pairing-file.js';
import { WhatsAppOutbound } from './outbound.js';
import { PeerMap } from './peer-map.js';
import type { WhatsAppPlugin, WhatsAppPluginOptions } from './plugin-options.js';
import { SentMessageStore } from './sent-message-store.js';

export type { WhatsAppPlugin, WhatsAppPluginOptions } from './plugin-options.js';

/**
 * Creates the WhatsApp channel plugin on Baileys (a linked device of a personal or business
 * WhatsApp account). Link it once by scanning the QR code printed at start; credentials are kept
 * in `stateDir/auth` with crash-safe writes.
 *
 * @param options - the `channels.whatsapp` section (`config`), the state folder and wiring overrides
 * @returns the plugin, to hand to the runtime
 * @throws ColloquyError `CONFIG_INVALID` when a setting is invalid (with the paths) or no state folder is given
 * @example
 * ```ts
 * const whatsapp = createWhatsAppPlugin({
 *   config: { dmPolicy: 'allowlist', allowFrom: ['+15551234567'] },
 *   stateDir: '/var/lib/bot/whatsapp',
 * });
 * const runtime = createRuntime({ config, store, model, channels: [whatsapp] });
 * ```
 */
export function createWhatsAppPlugin(options: WhatsAppPluginOptions = {}): WhatsAppPlugin {
  const config = resolveWhatsAppConfig(options.config);
  const stateDir = options.stateDir ?? config.stateDir;
  if (!stateDir) {
    throw sectionError(
      [
        {
          path: 'channels.whatsapp.stateDir',
          expected: 'the folder where the WhatsApp link is stored',
          got: 'nothing',
        },
      ],
      { path: 'channels.whatsapp', label: 'WhatsApp' },
    );
  }
  return new WhatsAppChannel(createChannelState(options, config, stateDir, silentLogger));
}

/**
 * The channel: loads its state at start and wires the connection, the access checks, inbound and
 * outbound together.
 */
class WhatsAppChannel implements WhatsAppPlugin {
  readonly id = 'whatsapp' as const;
  readonly capabilities: ChannelCapabilities;

  private readonly authDir: string;
  private readonly fs: StateFs;
  private readonly connection: WhatsAppConnection;
  private readonly inbound: WhatsAppInbound;
  private readonly outbound: WhatsAppOutbound;
  private auth: AtomicAuthState | undefined;
  private stopping: Promise<void> | undefined;

  constructor(private readonly shared: ChannelState) {
    this.authDir = join(shared.stateDir, 'auth');
    this.fs = shared.options.fs ?? nodeStateFs;
    this.connection = new WhatsAppConnection(shared, this.authDir, {
      subscribe: (listen) => this.inbound.subscribe(listen),
      groupMetadata: (jid) => this.inbound.groupCache.get(jid),
    });
    this.inbound = new WhatsAppInbound(shared, this.connection, new DmAccess(shared, this.connection));
    this.outbound = new WhatsAppOutbound(shared, this.connection);
    this.capabilities = {
      threads: false,
      edits: false,
      reactions: false,
      media: false,
      typing: true,
      maxTextLength: shared.config.chunkLength,
      markdown: 'whatsapp',
    };
  }

  // --- lifecycle ---

  async start(ctx: ChannelContext): Promise<void> {
    const { shared, connection } = this;
    if (connection.started) return;
    connection.started = true;
    connection.stopped = false;
    shared.ctx = ctx;
    shared.log = ctx.log.child({ channel: 'whatsapp', accountId: shared.accountId });
    connection.setState('starting', 'loading credentials');
    let auth: AtomicAuthState;
    try {
      await mkdir(shared.stateDir, { recursive: true });
      auth = await useAtomicAuthState(this.authDir, { fs: this.fs });
      this.auth = auth;
      shared.peers = await PeerMap.load(shared.stateDir, shared.log, this.fs);
      shared.ledger = await InboundLedger.load(shared.stateDir, shared.log, this.fs);
      shared.sentStore = await SentMessageStore.load(shared.stateDir, shared.log, this.fs);
      shared.peers.learnAll(shared.options.contacts ?? {});
      await importLegacyPairingFile(shared.stateDir, shared.accountId, ctx.pairing, shared.log, this.fs);
    } catch (error) {
      const failure = isColloquyError(error)
        ? error
        : new ColloquyError(
            'CHANNEL_ERROR',
            `WhatsApp could not load its state from ${shared.stateDir}: ${(error as Error).message}. Check that the folder is writable.`,
            { stateDir: shared.stateDir },
            { cause: error },
          );
      connection.setState('error', failure.message);
      connection.started = false;
      throw failure;
    }
    const keys = makeCacheableSignalKeyStore(
      auth.state.keys,
      toBaileysLogger(shared.log.child({ part: 'keys' })),
    );
    ctx.signal.addEventListener('abort', () => void this.stop(), { once: true });
    connection.open(ctx, auth, keys);
  }

  stop(): Promise<void> {
    if (this.stopping) return this.stopping;
    if (!this.connection.started) return Promise.resolve();
    this.stopping = this.shutdown().finally(() => {
      this.stopping = undefined;
    });
    return this.stopping;
  }

  /** Stops once; concurrent `stop()` calls (the abort signal, then the runtime) share it. */
  private async shutdown(): Promise<void> {
    const { shared, connection } = this;
    connection.halt();
    this.outbound.clearTyping();
    connection.closeSocket();
    await this.inbound.drain();
    await connection.releaseLease();
    await this.auth?.flush();
    await shared.peers?.flush();
    await shared.ledger?.flush();
    await shared.sentStore?.flush();
    if (connection.state !== 'logged-out' && connection.state !== 'error') {
      connection.setState('disconnected', 'stopped');
    }
  }

  async logout(): Promise<void> {
    const sock = this.connection.sock;
    if (sock)
      await sock
        .logout('unlinked by the owner')
        .catch((e: unknown) => this.shared.log.warn({ err: String(e) }, 'logout failed'));
    await this.stop();
    await resetWhatsAppAuth(this.shared.stateDir);
    this.connection.setState('logged-out', 'Unlinked. Start the channel again to link a device by QR code.');
  }

  status(): ChannelStatus {
    const { connection } = this;
    const status: ChannelStatus = { state: connection.state };
    const detail = connection.describe();
    if (detail !== undefined) status.detail = detail;
    const account: { accountId: string; state: string; detail?: string } = {
      accountId: this.shared.accountId,
      state: connection.qr ? 'awaiting-qr' : connection.state,
    };
    if (connection.qr) account.detail = connection.qr;
    else if (detail !== undefined) account.detail = detail;
    status.accounts = [account];
    return status;
  }

  latestQr(): string | undefined {
    return this.connection.qr;
  }

  // --- outbound ---

  send(to: DeliveryContext, message: OutboundMessage): Promise<SendResult> {
    return this.outbound.send(to, message);
  }

  sendTyping(to: DeliveryContext): Promise<void> {
    return this.outbound.sendTyping(to);
  }
}
