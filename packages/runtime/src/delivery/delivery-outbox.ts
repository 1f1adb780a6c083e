import type { Logger } from '@colloquy/core';

/** What one try of an outbox entry's send came to. */
export type SendAttempt =
  /** Sent, or failed for good: the entry leaves the outbox (its outcome is recorded). */
  | { status: 'settled' }
  /** The platform could not take it for now: the entry stays, and is tried again later. */
  | { status: 'retry'; error: string; retryAfterMs?: number };

/** One message waiting in the {@link DeliveryOutbox}. */
export interface OutboxEntry {
  /** The delivery target (channel, account, chat, thread): one send at a time per target, in order. */
  readonly target: string;
  /** The channel plugin id, for the backlog by channel. */
  readonly channel: string;
  /** When the entry entered the outbox (epoch ms); the retry age cap counts from here. */
  readonly since: number;
  /** Sends tried so far, by this process or an earlier one. */
  attempts: number;
  /** Tries the send once. Never throws. */
  attempt(): Promise<SendAttempt>;
  /** Stores the entry as waiting, so that the next process sends it if this one stops. Never throws. */
  park(lastError: string | undefined): Promise<void>;
  /** Records the entry as failed for good: it was retried until the age cap. Never throws. */
  giveUp(lastError: string): Promise<void>;
}

/** The retry schedule (`runtime.deliveryRetry`): delays double from the first to the cap. */
export interface OutboxRetryPolicy {
  firstDelayMs: number;
  maxDelayMs: number;
  /** After this long in the outbox, the next failure is final. */
  maxAgeMs: number;
}

/** Where an entry added to the outbox stands. */
export interface OutboxTicket {
  /** Resolves when the entry was sent, failed for good, or left for the next process (shutdown). */
  settled: Promise<void>;
  /** Resolves as soon as the entry is settled or stored as waiting (it then needs nobody to wait). */
  handedOff: Promise<void>;
}

/** The outbox's backlog, for `colloquy status`. */
export interface OutboxStats {
  /** Messages not yet sent: being sent, waiting for a retry, or waiting behind one. */
  pending: number;
  /** Targets (chats) whose last send failed and waits for a retry. */
  failingTargets: number;
  /** When the oldest pending message entered the outbox (epoch ms). */
  oldestSince?: number;
  /** Pending messages by channel plugin id. */
  byChannel: Record<string, number>;
}

/**
 * The delivery outbox: messages owed to chats, sent one at a time per target in the order they
 * were added, and kept while the target's platform fails. See {@link createDeliveryOutbox}.
 */
export interface DeliveryOutbox {
  /** Adds an entry behind the earlier ones of its target. */
  add(entry: OutboxEntry): OutboxTicket;
  /** The backlog now. */
  stats(): OutboxStats;
  /**
   * Stops waiting for retries (shutdown): a failing target's entries are stored as waiting and
   * left to the next process; other targets still send what they hold, once each.
   */
  close(): void;
  /** Resolves once no lane holds anything (after {@link DeliveryOutbox.close}: once each settled). */
  idle(): Promise<void>;
}

/** Options of {@link createDeliveryOutbox}. */
export interface DeliveryOutboxOptions {
  retry: OutboxRetryPolicy;
  now: () => number;
  log: Logger;
}

interface Slot {
  entry: OutboxEntry;
  /** Its `park` since its last try: done or under way. */
  parked: Promise<void> | undefined;
  handOff: () => void;
  settle: () => void;
}

interface Lane {
  slots: Slot[];
  /** The head's last try failed; it waits for a retry. */
  failing: boolean;
}

/**
 * Creates the delivery outbox. Each target has a lane: its entries are sent one at a time, in the
 * order added, so a chat never sees a later reply before an earlier one. When a send fails with a
 * retryable error, the lane holds: the head and every entry behind it are stored as waiting
 * (`park`), and the head is tried again after `firstDelayMs`, doubling up to `maxDelayMs` (or the
 * platform's `retryAfterMs` when longer), until it succeeds or is older than `maxAgeMs`
 * (`giveUp`). Lanes of other targets are not held up.
 *
 * @param options - the retry schedule, the clock and the logger
 * @returns the outbox
 */
export function createDeliveryOutbox(options: DeliveryOutboxOptions): DeliveryOutbox {
  const { retry, now, log } = options;
  const lanes = new Map<string, Lane>();
  const draining = new Set<Promise<void>>();
  let closed = false;
  let wakeSleepers: () => void = () => {};
  const closing = new Promise<void>((resolve) => {
    wakeSleepers = resolve;
  });

  return {
    add(entry) {
      let handOff!: () => void;
      let settle!: () => void;
      const handedOff = new Promise<void>((resolve) => {
        handOff = resolve;
      });
      const settled = new Promise<void>((resolve) => {
        settle = resolve;
      });
      const slot: Slot = { entry, parked: undefined, handOff, settle };
      const lane = lanes.get(entry.target);
      if (lane) {
        lane.slots.push(slot);
        // Behind a failing send: stored as waiting now, so a crash does not lose it.
        if (lane.failing) void parkSlot(slot, undefined);
      } else {
        const fresh: Lane = { slots: [slot], failing: false };
        lanes.set(entry.target, fresh);
        const drained = drain(entry.target, fresh).finally(() => draining.delete(drained));
        draining.add(drained);
      }
      return { settled, handedOff };
    },
    stats() {
      const byChannel: Record<string, number> = {};
      let pending = 0;
      let failingTargets = 0;
      let oldestSince: number | undefined;
      for (const lane of lanes.values()) {
        if (lane.failing) failingTargets++;
        for (const { entry } of lane.slots) {
          pending++;
          byChannel[entry.channel] = (byChannel[entry.channel] ?? 0) + 1;
          if (oldestSince === undefined || entry.since < oldestSince) oldestSince = entry.since;
        }
      }
      return { pending, failingTargets, byChannel, ...(oldestSince !== undefined ? { oldestSince } : {}) };
    },
    close() {
      closed = true;
      wakeSleepers();
    },
    async idle() {
      while (draining.size > 0) await Promise.all(draining);
    },
  };

  async function drain(target: string, lane: Lane): Promise<void> {
    while (lane.slots.length > 0) {
      const slot = lane.slots[0] as Slot;
      const kept = await sendHead(target, lane, slot);
      if (!kept) {
        // Shutdown while the target fails: everything is stored as waiting for the next process.
        await Promise.all(lane.slots.map((waiting) => parkSlot(waiting, undefined)));
        for (const waiting of lane.slots) waiting.settle();
        lane.slots = [];
        break;
      }
      lane.slots.shift();
      slot.handOff();
      slot.settle();
    }
    lanes.delete(target);
  }

  /** Sends the head until it settles; `false` when shutdown left it (and its lane) waiting. */
  async function sendHead(target: string, lane: Lane, slot: Slot): Promise<boolean> {
    const { entry } = slot;
    for (;;) {
      if (closed && lane.failing) return false;
      const result = await entry.attempt();
      entry.attempts++;
      if (result.status === 'settled') {
        if (lane.failing) log.info({ target, attempts: entry.attempts }, 'the platform took the reply again');
        lane.failing = false;
        return true;
      }
      if (!lane.failing) {
        log.warn(
          { target, error: result.error },
          'a chat platform could not take a reply; it is kept in the outbox and sent again',
        );
      }
      lane.failing = true;
      const age = now() - entry.since;
      if (age >= retry.maxAgeMs) {
        log.warn({ target, attempts: entry.attempts, error: result.error }, 'gave up sending a reply');
        await entry.giveUp(result.error);
        return true;
      }
      slot.parked = undefined;
      await Promise.all(
        lane.slots.map((waiting) => parkSlot(waiting, waiting === slot ? result.error : undefined)),
      );
      if (closed) return false;
      await sleep(Math.min(delayFor(entry.attempts, result.retryAfterMs), retry.maxAgeMs - age));
    }
  }

  function parkSlot(slot: Slot, lastError: string | undefined): Promise<void> {
    slot.parked ??= slot.entry.park(lastError).then(slot.handOff);
    return slot.parked;
  }

  function delayFor(attempts: number, retryAfterMs: number | undefined): number {
    const doubled = Math.min(retry.maxDelayMs, retry.firstDelayMs * 2 ** Math.max(0, attempts - 1));
    return Math.max(doubled, retryAfterMs ?? 0);
  }

  function sleep(ms: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    return Promise.race([
      new Promise<void>((resolve) => {
        timer = setTimeout(resolve, ms);
        timer.unref();
      }),
      closing,
    ]).finally(() => clearTimeout(timer));
  }
}
