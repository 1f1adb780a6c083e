import { setTimeout as sleep } from 'node:timers/promises';
import type { Gateway } from '@colloquy/core';

/** One `mcp.pending` wait: below the CLI gateway client's request timeout (15 s). */
const SLICE_MS = 10_000;
/** The pause after a failed wait (the bot restarting, a dropped connection) before the next. */
const RETRY_MS = 1_000;
/** The pause after a wait that ended without a change, so a gateway that answers at once (shutting down) is not spun on. */
const IDLE_MS = 100;

/** Options of {@link watchEvents}. */
export interface EventsWatcherOptions {
  /** The gateway (`mcp.pending`). */
  gateway: Gateway;
  /** The MCP client's session. */
  sessionKey: string;
  /** Opens the client's session before the first look. */
  open: () => Promise<unknown>;
  /** Called once per new unread event (several arriving together may make one call). */
  onNewEvent: () => Promise<void> | void;
  /** Receives failed waits; the watcher goes on after a pause. */
  onError?: (error: Error) => void;
}

/** A running watcher. */
export interface EventsWatcher {
  /** Stops watching. A wait in flight ends by itself (its answer is ignored). */
  close(): void;
}

/**
 * Watches an MCP client's inbox through the gateway and calls `onNewEvent` whenever a new event
 * becomes the newest unread one. Nothing is taken: the events stay for `events_wait`. Events that
 * were already unread when it started do not count.
 *
 * @param options - gateway, session and callbacks
 * @returns the watcher
 */
export function watchEvents(options: EventsWatcherOptions): EventsWatcher {
  const { gateway, sessionKey } = options;
  const stopping = new AbortController();
  const run = async (): Promise<void> => {
    let seen: string | undefined;
    let started = false;
    while (!stopping.signal.aborted) {
      try {
        if (!started) {
          await options.open();
          ({ newestId: seen } = await gateway.call('mcp.pending', { sessionKey, limit: 1 }));
          started = true;
          continue;
        }
        const { newestId } = await gateway.call('mcp.pending', {
          sessionKey,
          limit: 1,
          waitForChange: true,
          ...(seen === undefined ? {} : { newestId: seen }),
          timeoutMs: SLICE_MS,
        });
        if (stopping.signal.aborted) return;
        const changed = newestId !== seen;
        const arrived = changed && newestId !== undefined;
        seen = newestId;
        if (arrived) await options.onNewEvent();
        else if (!changed) await pause(IDLE_MS, stopping.signal);
      } catch (error) {
        if (stopping.signal.aborted) return;
        options.onError?.(error instanceof Error ? error : new Error(String(error)));
        await pause(RETRY_MS, stopping.signal);
      }
    }
  };
  void run();
  return { close: () => stopping.abort() };
}

/** Waits `ms`, or less when `signal` aborts first. */
async function pause(ms: number, signal: AbortSignal): Promise<void> {
  await sleep(ms, undefined, { signal }).catch(() => undefined);
}
