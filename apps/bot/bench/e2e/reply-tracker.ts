import { quantile } from './stats.js';

/** The figures of one load run. */
export interface RunFigures {
  sent: number;
  answered: number;
  lost: number;
  duplicated: number;
  repliesPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  /** From the last message sent to the last reply seen. */
  drainMs: number;
  /** App CPU (user + system) per answered message. */
  cpuMsPerTurn: number;
}

/**
 * Matches replies to the messages that caused them: each message carries a unique id, the fake model
 * answers `re: <id>`, and the channel fake reports what the bot sent.
 */
export class ReplyTracker {
  readonly #sentAt = new Map<string, number>();
  readonly #replies = new Map<string, number[]>();
  #answered = 0;
  #firstSent = Number.POSITIVE_INFINITY;
  #lastSent = 0;
  #lastReply = 0;
  #wake: (() => void) | undefined;

  /** Records a message sent now. */
  sent(id: string, at = performance.now()): void {
    this.#sentAt.set(id, at);
    this.#firstSent = Math.min(this.#firstSent, at);
    this.#lastSent = Math.max(this.#lastSent, at);
  }

  /** Records a reply seen now; text without a known id is ignored. */
  seen(id: string, at = performance.now()): void {
    if (!this.#sentAt.has(id)) return;
    const times = this.#replies.get(id);
    if (times) {
      times.push(at);
      return;
    }
    this.#replies.set(id, [at]);
    this.#answered++;
    this.#lastReply = at;
    if (this.#answered === this.#sentAt.size) this.#wake?.();
  }

  /** Resolves once every sent message has a reply, or after `timeoutMs`. */
  async waitAll(timeoutMs: number): Promise<void> {
    if (this.#answered === this.#sentAt.size) return;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, timeoutMs);
      this.#wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
    this.#wake = undefined;
  }

  /** The figures so far; `cpuMs` is the app's CPU over the run. */
  figures(cpuMs: number): RunFigures {
    const latencies: number[] = [];
    let duplicated = 0;
    for (const [id, times] of this.#replies) {
      latencies.push(times[0]! - this.#sentAt.get(id)!);
      duplicated += times.length - 1;
    }
    const seconds = (this.#lastReply - this.#firstSent) / 1000;
    return {
      sent: this.#sentAt.size,
      answered: this.#answered,
      lost: this.#sentAt.size - this.#answered,
      duplicated,
      repliesPerSecond: seconds > 0 ? this.#answered / seconds : Number.NaN,
      p50Ms: quantile(latencies, 0.5),
      p99Ms: quantile(latencies, 0.99),
      maxMs: latencies.length > 0 ? Math.max(...latencies) : Number.NaN,
      drainMs: this.#lastReply - this.#lastSent,
      cpuMsPerTurn: this.#answered > 0 ? cpuMs / this.#answered : Number.NaN,
    };
  }
}
