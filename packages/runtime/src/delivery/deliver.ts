import {
  type ChannelPlugin,
  type ColloquyConfig,
  type DeliveryContext,
  evaluateSendPolicy,
  isColloquyError,
  type Logger,
  type OutboundMessage,
  type SessionRecord,
} from '@colloquy/core';
import type { DeliveryOutcome } from '@colloquy/core/gateway';
import type { EventBus } from '../gateway/event-bus.js';
import { traceDelivery } from '../telemetry/channel-spans.js';
import type { Telemetry } from '../telemetry/telemetry.js';
import { classifySendFailure } from './send-failure.js';

/** What an outbound message is, for logs and the `delivery` event. */
export type DeliveryKind = 'reply' | 'chat.send' | 'announce' | 'error-notice' | 'command' | 'progress';

/** One outbound message for {@link Deliver}. */
export interface DeliveryRequest {
  /** The session the message belongs to (its send policy applies). */
  session: SessionRecord;
  /** The message to send. */
  message: OutboundMessage;
  /** What the message is (a reply, an announce, ...), for logs. */
  kind: DeliveryKind;
  /** Where to send. Default: the session's `deliveryContext`. */
  to?: DeliveryContext;
  /**
   * The platform id of a message sent earlier to the same chat: its text is replaced with
   * `message` (`ChannelPlugin.editMessage`) instead of a new message being sent. The outcome's
   * `messageId` is this id; a channel without edits fails with `NOT_SUPPORTED`.
   */
  edit?: string;
}

/**
 * The one outbound path: every reply, `chat.send`, announce and error notice goes through it.
 * Never throws; refusals and failures come back as a `DeliveryOutcome` (`@colloquy/core`).
 */
export type Deliver = (request: DeliveryRequest) => Promise<DeliveryOutcome>;

/** Options of {@link createDeliver}. */
export interface DeliverOptions {
  config: ColloquyConfig;
  /** Running channel plugins by id. */
  plugins: ReadonlyMap<string, ChannelPlugin>;
  events: EventBus;
  logger: Logger;
  /** Spans (`colloquy.deliver <channel>`) and the failed-delivery count. Default: none. */
  telemetry?: Telemetry;
}

/**
 * Creates the outbound delivery pipeline:
 * 1. pick the target (explicit, else the session's delivery context; none -> `skipped`);
 * 2. check send policy with `evaluateSendPolicy` (denied -> `denied`, the plugin is never called);
 * 3. call the channel plugin's `send`, or `editMessage` for a request with `edit` (a throw ->
 *    `failed` with the error's code, `retryable` when the platform could not take it for now, see
 *    `classifySendFailure`).
 * Each outcome is published as a `delivery` event.
 *
 * @param options - config, plugins, events and logger
 * @returns the {@link Deliver} function
 */
export function createDeliver(options: DeliverOptions): Deliver {
  const { config, plugins, events, logger, telemetry } = options;
  return async ({ session, message, kind, to: explicit, edit }) => {
    const to = explicit ?? session.deliveryContext;
    if (!to) {
      return {
        status: 'skipped',
        reason: `Session ${session.key} has no delivery context (no channel message yet).`,
      };
    }
    const outcome = telemetry
      ? await traceDelivery(telemetry, to.channel, kind, () => deliverTo(to))
      : await deliverTo(to);
    if (outcome.status !== 'delivered') {
      logger.info({ sessionKey: session.key, kind, outcome }, 'delivery not sent');
    }
    events.emit({ type: 'delivery', sessionKey: session.key, to, outcome });
    return outcome;

    async function deliverTo(target: DeliveryContext): Promise<DeliveryOutcome> {
      // One verdict for the session, as the tools compute it (spec section 11).
      const policy = evaluateSendPolicy(session, config.session.sendPolicy);
      if (!policy.allowed) return { status: 'denied', reason: policy.reason };
      if (message.text.trim() === '') return { status: 'skipped', reason: 'The message is empty.' };
      const plugin = plugins.get(target.channel);
      if (!plugin) {
        return {
          status: 'failed',
          error: `No channel plugin "${target.channel}" is running; add it to the runtime's plugins.`,
          code: 'CHANNEL_ERROR',
        };
      }
      if (edit !== undefined && !plugin.editMessage) {
        return {
          status: 'failed',
          error: `The channel "${target.channel}" cannot edit messages (capabilities.edits is false).`,
          code: 'NOT_SUPPORTED',
        };
      }
      try {
        if (edit !== undefined) {
          await plugin.editMessage?.(target, edit, message);
          return { status: 'delivered', messageId: edit, messageIds: [edit] };
        }
        const sent = await plugin.send(target, message);
        return { status: 'delivered', messageId: sent.messageId, messageIds: sent.messageIds };
      } catch (error) {
        const text = error instanceof Error ? error.message : String(error);
        const { retryable, retryAfterMs } = classifySendFailure(error);
        return {
          status: 'failed',
          error: text,
          code: isColloquyError(error) ? error.code : 'CHANNEL_ERROR',
          ...(retryable ? { retryable } : {}),
          ...(retryable && retryAfterMs !== undefined ? { retryAfterMs } : {}),
        };
      }
    }
  };
}
