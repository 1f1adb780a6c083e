import type { ChannelPlugin, ColloquyConfig, Logger, SessionRecord } from '@colloquy/core';
import { evaluateSendPolicy } from '@colloquy/core';

/** Options of {@link startTyping}. */
export interface TypingOptions {
  config: ColloquyConfig;
  plugins: ReadonlyMap<string, ChannelPlugin>;
  logger: Logger;
  /** Refresh interval. Default 4000 ms (platform indicators fade after about 5 s). */
  intervalMs?: number;
  /** Wait this long before the first indicator (none if stopped before). Default 0: at once. */
  delayMs?: number;
}

/**
 * Shows a typing indicator in the session's chat now (or after `delayMs`) and refreshes it until the
 * returned function is called. Nothing happens when the session has no delivery context, its plugin
 * cannot show typing, or send policy denies the session (an indicator for a reply that cannot come
 * would lie).
 *
 * @param session - the session whose run is active
 * @param options - config, plugins, logger, interval, delay
 * @returns stop function (idempotent)
 */
export function startTyping(session: SessionRecord, options: TypingOptions): () => void {
  const to = session.deliveryContext;
  const plugin = to ? options.plugins.get(to.channel) : undefined;
  if (!to || !plugin?.sendTyping || !plugin.capabilities.typing) return () => {};
  const allowed = evaluateSendPolicy(session, options.config.session.sendPolicy).allowed;
  if (!allowed) return () => {};
  const send = () => {
    plugin.sendTyping?.(to).catch((error: unknown) => {
      options.logger.debug({ err: error, sessionKey: session.key }, 'typing indicator failed');
    });
  };
  let timer: NodeJS.Timeout | undefined;
  const start = () => {
    send();
    timer = setInterval(send, options.intervalMs ?? 4000);
    timer.unref();
  };
  const delayMs = options.delayMs ?? 0;
  const delay = delayMs > 0 ? setTimeout(start, delayMs) : undefined;
  if (delay) delay.unref();
  else start();
  return () => {
    clearTimeout(delay);
    clearInterval(timer);
  };
}
