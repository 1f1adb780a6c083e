/** WhatsApp shows "typing…" for about 25 s; resend it no more often than this. */
const COMPOSING_RESEND_MS = 8000;

type SendPresence = (type: 'composing' | 'paused', jid: string) => Promise<void>;

/**
 * "typing…" per chat: `composing` on the first call (and again every few seconds while calls keep
 * coming), `paused` when the reply goes out or when calls stop for `timeoutMs`.
 */
export class TypingIndicator {
  private readonly chats = new Map<string, { lastCall: number; lastSent: number; watch: NodeJS.Timeout }>();

  constructor(
    private readonly sendPresence: SendPresence,
    private readonly timeoutMs: number,
  ) {}

  /** Shows or refreshes "typing…" in `jid`. */
  async start(jid: string): Promise<void> {
    const now = performance.now();
    let entry = this.chats.get(jid);
    if (!entry) {
      const watch = setInterval(
        () => {
          const current = this.chats.get(jid);
          if (current && performance.now() - current.lastCall >= this.timeoutMs) this.stop(jid);
        },
        Math.max(10, Math.min(5000, this.timeoutMs / 2)),
      );
      watch.unref();
      entry = { lastCall: now, lastSent: Number.NEGATIVE_INFINITY, watch };
      this.chats.set(jid, entry);
    }
    entry.lastCall = now;
    if (now - entry.lastSent < COMPOSING_RESEND_MS) return;
    entry.lastSent = now;
    await this.sendPresence('composing', jid);
  }

  /** Ends "typing…" in `jid` (no-op when not typing there). */
  stop(jid: string): void {
    const entry = this.chats.get(jid);
    if (!entry) return;
    clearInterval(entry.watch);
    this.chats.delete(jid);
    void this.sendPresence('paused', jid);
  }

  /** Forgets every chat without sending anything (on shutdown). */
  clear(): void {
    for (const entry of this.chats.values()) clearInterval(entry.watch);
    this.chats.clear();
  }
}
