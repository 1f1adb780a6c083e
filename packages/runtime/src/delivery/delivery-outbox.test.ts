import { silentLogger } from '@colloquy/core';
import { describe, expect, it } from 'vitest';
import { createDeliveryOutbox, type OutboxEntry, type OutboxRetryPolicy } from './delivery-outbox.js';

const FAST: OutboxRetryPolicy = { firstDelayMs: 5, maxDelayMs: 20, maxAgeMs: 60_000 };

/** A fake platform: targets listed in `down` fail retryably; every try and park is logged. */
function platform() {
  const down = new Set<string>();
  const sent: string[] = [];
  const log: string[] = [];
  const entry = (target: string, text: string, since = Date.now()): OutboxEntry => ({
    target,
    channel: target.split(':')[0] ?? target,
    since,
    attempts: 0,
    async attempt() {
      log.push(`try ${text}`);
      await new Promise((resolve) => setTimeout(resolve, 1));
      if (down.has(target)) return { status: 'retry', error: `${target} is down` };
      sent.push(text);
      return { status: 'settled' };
    },
    async park() {
      log.push(`park ${text}`);
    },
    async giveUp(error) {
      log.push(`give up ${text}: ${error}`);
    },
  });
  return { down, sent, log, entry };
}

const until = async (check: () => boolean, what: string): Promise<void> => {
  for (let i = 0; i < 400 && !check(); i++) await new Promise((resolve) => setTimeout(resolve, 5));
  if (!check()) throw new Error(`timed out waiting for ${what}`);
};

describe('createDeliveryOutbox', () => {
  it('sends a target in order while its platform fails and recovers, and holds no other target', async () => {
    const p = platform();
    const outbox = createDeliveryOutbox({ retry: FAST, now: Date.now, log: silentLogger });
    p.down.add('telegram:a');
    const a1 = outbox.add(p.entry('telegram:a', 'a1'));
    const a2 = outbox.add(p.entry('telegram:a', 'a2'));
    const b1 = outbox.add(p.entry('discord:b', 'b1'));
    // The failing head and the entry behind it are stored as waiting: nobody needs to wait for them.
    await Promise.all([a1.handedOff, a2.handedOff, b1.settled]);
    expect(p.sent).toEqual(['b1']);
    expect(p.log).toContain('park a1');
    expect(p.log).toContain('park a2');
    expect(outbox.stats()).toMatchObject({ pending: 2, failingTargets: 1, byChannel: { telegram: 2 } });
    await until(() => p.log.filter((l) => l === 'try a1').length >= 3, 'three tries of a1');
    // Only the head is tried while the target fails: a2 never overtakes a1.
    expect(p.log).not.toContain('try a2');
    const a3 = outbox.add(p.entry('telegram:a', 'a3'));
    await a3.handedOff;
    expect(p.log).toContain('park a3');
    p.down.delete('telegram:a');
    await Promise.all([a1.settled, a2.settled, a3.settled]);
    expect(p.sent).toEqual(['b1', 'a1', 'a2', 'a3']);
    expect(outbox.stats()).toEqual({ pending: 0, failingTargets: 0, byChannel: {} });
  });

  it('gives an entry up once it is older than maxAgeMs, then sends the next', async () => {
    const p = platform();
    const outbox = createDeliveryOutbox({
      retry: { ...FAST, maxAgeMs: 40 },
      now: Date.now,
      log: silentLogger,
    });
    p.down.add('telegram:a');
    const old = outbox.add(p.entry('telegram:a', 'old'));
    await old.settled;
    expect(p.log.at(-1)).toBe('give up old: telegram:a is down');
    p.down.delete('telegram:a');
    await outbox.add(p.entry('telegram:a', 'new')).settled;
    expect(p.sent).toEqual(['new']);
  });

  it('waits at least the retry-after the platform asked for', async () => {
    const outbox = createDeliveryOutbox({ retry: FAST, now: Date.now, log: silentLogger });
    const tries: number[] = [];
    const ticket = outbox.add({
      target: 'slack:c',
      channel: 'slack',
      since: Date.now(),
      attempts: 0,
      async attempt() {
        tries.push(Date.now());
        return tries.length === 1
          ? { status: 'retry', error: '429', retryAfterMs: 150 }
          : { status: 'settled' };
      },
      park: async () => {},
      giveUp: async () => {},
    });
    await ticket.settled;
    expect((tries[1] ?? 0) - (tries[0] ?? 0)).toBeGreaterThanOrEqual(140);
  });

  it('on close, leaves a failing target stored as waiting and still sends the others once', async () => {
    const p = platform();
    const outbox = createDeliveryOutbox({
      retry: { ...FAST, firstDelayMs: 60_000, maxDelayMs: 60_000 },
      now: Date.now,
      log: silentLogger,
    });
    p.down.add('telegram:a');
    const a1 = outbox.add(p.entry('telegram:a', 'a1'));
    const a2 = outbox.add(p.entry('telegram:a', 'a2'));
    await a1.handedOff;
    outbox.close();
    const b1 = outbox.add(p.entry('discord:b', 'b1'));
    // A minute-long backoff does not hold shutdown.
    await outbox.idle();
    await Promise.all([a1.settled, a2.settled, b1.settled]);
    expect(p.sent).toEqual(['b1']);
    expect(p.log.filter((l) => l === 'try a1')).toHaveLength(1);
    expect(p.log).toEqual(expect.arrayContaining(['park a1', 'park a2']));
    expect(outbox.stats().pending).toBe(0);
  });
});
