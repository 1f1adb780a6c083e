import type { BackoffOptions, ChannelPlugin, ChannelStatus } from '@colloquy/core';
import type { StateFs } from './atomic-file.js';
import type { WhatsAppConfigInput } from './config.js';
import type { QrOutput } from './qr.js';
import type { WhatsAppSocketFactory } from './socket.js';

/** Options of `createWhatsAppPlugin`: the `channels.whatsapp` section plus wiring. */
export interface WhatsAppPluginOptions {
  /** The `channels.whatsapp` config section; validated by `resolveWhatsAppConfig`. Default: all defaults. */
  config?: WhatsAppConfigInput;
  /**
   * Folder for credentials (`auth/`), the LID map and pairings. Default: `config.stateDir`; one of
   * the two is required.
   */
  stateDir?: string;
  /** The account id used in session keys and delivery contexts. Default `default`. */
  accountId?: string;
  /** Makes the socket. Default: Baileys' `makeWASocket`. Tests pass a fake. */
  makeSocket?: WhatsAppSocketFactory;
  /** Where the pairing QR code is printed. Default `process.stdout`; `false` prints nothing. */
  qrOutput?: QrOutput | false;
  /** Called with every new QR string (the web chat's owner panel shows it). */
  onQr?: (qr: string) => void;
  /** Known LID-to-phone pairs (`'123456@lid': '+15551234567'`), merged into the learned map. */
  contacts?: Record<string, string>;
  /** Reconnect backoff (core's `backoffDelay`). Default 1 s doubling to 60 s, less up to 20 % at random. */
  reconnect?: BackoffOptions;
  /**
   * How long a message the store could not take (the database restarting) waits before it is handed
   * to the runtime again. Baileys acknowledges a message to WhatsApp as it arrives, so it is not
   * delivered again: it is retried until stored or the plugin stops, and the messages after it wait.
   * Default 500 ms doubling to 10 s.
   */
  receiveBackoff?: BackoffOptions;
  /**
   * A connected socket with no frame from WhatsApp for this long is judged dead and replaced.
   * Baileys pings every 30 s, so a healthy link never gets near. Default 180000 ms; 0 disables.
   */
  staleAfterMs?: number;
  /**
   * How long `send` waits for a (re)connection before failing; the failure is retryable, so the
   * runtime's delivery outbox keeps the reply and sends it once the link is back. Default 5000 ms.
   */
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

/** The WhatsApp channel: a `ChannelPlugin` (`@colloquy/core`) with linking helpers. */
export interface WhatsAppPlugin extends ChannelPlugin {
  /** Always `whatsapp`. */
  readonly id: 'whatsapp';
  /** The connection's health, for `colloquy status`. */
  status(): ChannelStatus;
  /** The QR string waiting to be scanned, if the device is not linked yet. */
  latestQr(): string | undefined;
  /** Unlinks this device from the phone and deletes the stored credentials. */
  logout(): Promise<void>;
}
