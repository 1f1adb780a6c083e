import {
  ColloquyError,
  type DeliveryContext,
  isColloquyError,
  type OutboundMessage,
  type SendResult,
} from '@colloquy/core';
import { renderMessages, whatsapp } from '@colloquy/markdown';
import type { WAMessage } from '@whiskeysockets/baileys';
import type { ChannelState } from './channel-state.js';
import { closeStatusCode, isTransientSendFailure } from './close-reason.js';
import type { WhatsAppConnection } from './connection.js';
import { jidKind } from './jid.js';
import { TypingIndicator } from './typing-indicator.js';

/** A reply quotes the message that addressed the bot only if it comes within this time. */
const QUOTE_WINDOW_MS = 10 * 60 * 1000;

/**
 * Messages out: markdown converted and split into `chunkLength` pieces, the first quoting the message
 * it answers, each send retried once across a reconnect; and the typing indicator.
 */
export class WhatsAppOutbound {
  private readonly typing: TypingIndicator;

  constructor(
    private readonly shared: ChannelState,
    private readonly connection: WhatsAppConnection,
  ) {
    this.typing = new TypingIndicator(
      (type, jid) => this.presence(type, jid),
      shared.options.typingTimeoutMs ?? 15_000,
    );
  }

  async send(to: DeliveryContext, message: OutboundMessage): Promise<SendResult> {
    const { peers, config, awaitingReply } = this.shared;
    if (!peers)
      throw new ColloquyError('CHANNEL_ERROR', 'The WhatsApp channel is not running; start it first.');
    const jid = peers.jidFor(to.to);
    const chunks = renderMessages(message.text, whatsapp, {
      format: message.format ?? 'markdown',
      limit: config.chunkLength,
    });
    if (chunks.length === 0) {
      throw new ColloquyError(
        'INVALID_ARGUMENT',
        'Cannot send an empty WhatsApp message; give it some text.',
        { to: to.to },
      );
    }
    const awaiting = awaitingReply.get(jid);
    awaitingReply.delete(jid);
    const fresh = awaiting && performance.now() - awaiting.at < QUOTE_WINDOW_MS ? awaiting.id : undefined;
    const quoted = this.quoteFor(jid, message.replyToMessageId ?? fresh);
    const ids: string[] = [];
    try {
      for (const [index, chunk] of chunks.entries()) {
        const options = index === 0 && quoted ? { quoted } : undefined;
        ids.push(await this.sendOne(jid, chunk, options));
      }
    } catch (error) {
      // The link is down or WhatsApp is busy: the runtime's delivery outbox keeps the reply and
      // sends it again (unless some chunks went out, which `sentMessageIds` tells it).
      const retryable = isColloquyError(error)
        ? error.details.retryable === true
        : isTransientSendFailure(error);
      throw new ColloquyError(
        'CHANNEL_ERROR',
        `WhatsApp send to ${jid} failed after ${ids.length} of ${chunks.length} messages: ${(error as Error).message}`,
        { jid, sentMessageIds: ids, code: closeStatusCode(error), retryable },
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
    const shared = this.shared;
    for (let attempt = 0; ; attempt++) {
      const sock = await this.connection.whenOpen();
      try {
        const sent = await sock.sendMessage(jid, { text }, options);
        const id = sent?.key.id;
        if (!id) throw new Error('WhatsApp returned no message id');
        shared.sentIds.set(id, true);
        // Kept (also on disk) so Baileys can re-encrypt it when a recipient's device asks for a retry.
        shared.recent.set(id, sent);
        shared.sentStore?.record(id, sent.message);
        this.connection.touch();
        return id;
      } catch (error) {
        const linkDropped = this.connection.sock !== sock || this.connection.state !== 'connected';
        if (attempt > 0 || !linkDropped || isColloquyError(error)) throw error;
        shared.log.warn(
          { err: (error as Error).message },
          'WhatsApp send failed while the link dropped; retrying once',
        );
      }
    }
  }

  private quoteFor(jid: string, replyTo: string | undefined): WAMessage | undefined {
    if (!replyTo) return undefined;
    const mode = this.shared.options.quoteReplies ?? 'groups';
    if (mode === 'off' || (mode === 'groups' && jidKind(jid) !== 'group')) return undefined;
    return this.shared.recent.get(replyTo);
  }

  async sendTyping(to: DeliveryContext): Promise<void> {
    const peers = this.shared.peers;
    if (!peers || this.connection.state !== 'connected' || !this.connection.sock) return;
    await this.typing.start(peers.jidFor(to.to));
  }

  /** Ends every "typing…" at once (shutdown). */
  clearTyping(): void {
    this.typing.clear();
  }

  private async presence(type: 'composing' | 'paused', jid: string): Promise<void> {
    const sock = this.connection.sock;
    if (!sock || this.connection.state !== 'connected') return;
    await sock.sendPresenceUpdate(type, jid).catch((error: unknown) => {
      this.shared.log.debug({ err: (error as Error).message }, 'presence update failed');
    });
  }
}
