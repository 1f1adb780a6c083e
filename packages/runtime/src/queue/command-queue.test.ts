import type { Lane } from '@colloquy/core/gateway';
import { describe, expect, it } from 'vitest';
import { createCommandQueue, type QueueItem } from './command-queue.js';
import { stopKindOf } from './stop-reason.js';

interface Item extends QueueItem {
  text: string;
}

/** A gate the test opens by hand, so a batch can be held "running". */
function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

const item = (id: string, sessionKey: string, lane: Lane = 'main', extra: Partial<Item> = {}): Item => ({
  id,
  sessionKey,
  lane,
  text: id,
  ...extra,
});

const tick = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('createCommandQueue', () => {
  it('runs one batch at a time per session, in arrival order', async () => {
    const started: string[] = [];
    let concurrent = 0;
    let maxConcurrent = 0;
    const queue = createCommandQueue<Item>({
      limits: { main: 4, subagent: 1, cron: 1 },
      async execute(batch) {
        concurrent++;
        maxConcurrent = Math.max(maxConcurrent, concurrent);
        started.push(batch.map((b) => b.id).join('+'));
        await tick();
        concurrent--;
      },
    });
    for (const id of ['a', 'b', 'c', 'd']) queue.enqueue(item(id, 's1'));
    await waitFor(() => started.length === 4, 'four started');
    await queue.idle();
    expect(started).toEqual(['a', 'b', 'c', 'd']);
    expect(maxConcurrent).toBe(1);
  });

  it('folds items that arrive during a run into the next turn, in order', async () => {
    const gate = deferred();
    const batches: string[][] = [];
    const queue = createCommandQueue<Item>({
      limits: { main: 4, subagent: 1, cron: 1 },
      canFold: (head, next) => head.lane === next.lane,
      async execute(batch) {
        batches.push(batch.map((b) => b.id));
        if (batches.length === 1) await gate.promise;
      },
    });
    queue.enqueue(item('first', 's1'));
    await tick();
    queue.enqueue(item('second', 's1'));
    queue.enqueue(item('third', 's1'));
    queue.enqueue(item('fourth', 's1', 'cron'));
    expect(queue.pendingCount('s1')).toBe(3);
    gate.resolve();
    await waitFor(() => batches.length === 3, 'three batches');
    expect(batches).toEqual([['first'], ['second', 'third'], ['fourth']]);
  });

  it('runs at most the lane limit of sessions at once, per lane', async () => {
    const gates = new Map<string, ReturnType<typeof deferred>>();
    const running = new Set<string>();
    const queue = createCommandQueue<Item>({
      limits: { main: 2, subagent: 3, cron: 1 },
      async execute(batch) {
        const id = batch[0]!.id;
        running.add(id);
        const gate = deferred();
        gates.set(id, gate);
        await gate.promise;
        running.delete(id);
      },
    });
    for (let i = 0; i < 5; i++) queue.enqueue(item(`m${i}`, `main-${i}`, 'main'));
    for (let i = 0; i < 5; i++) queue.enqueue(item(`s${i}`, `sub-${i}`, 'subagent'));
    await tick();
    expect([...running].filter((id) => id.startsWith('m'))).toHaveLength(2);
    expect([...running].filter((id) => id.startsWith('s'))).toHaveLength(3);
    expect(queue.stats().lanes.main).toEqual({ limit: 2, running: 2, waitingSessions: 3 });
    gates.get('m0')!.resolve();
    await waitFor(() => running.has('m2'), 'm2 running');
    expect([...running].filter((id) => id.startsWith('m'))).toEqual(['m1', 'm2']);
    for (const gate of gates.values()) gate.resolve();
    for (let i = 0; i < 10 && queue.stats().pending > 0; i++) {
      await tick();
      for (const gate of gates.values()) gate.resolve();
    }
  });

  it('serves waiting sessions round-robin so one busy session cannot starve the others', async () => {
    const order: string[] = [];
    const queue = createCommandQueue<Item>({
      limits: { main: 1, subagent: 1, cron: 1 },
      async execute(batch) {
        order.push(batch[0]!.sessionKey);
        await tick();
      },
    });
    // The busy session queues ten items before the quiet ones arrive.
    for (let i = 0; i < 10; i++) queue.enqueue(item(`busy-${i}`, 'busy'));
    queue.enqueue(item('q1', 'quiet-1'));
    queue.enqueue(item('q2', 'quiet-2'));
    await waitFor(() => order.length === 12, 'twelve runs');
    expect(order.indexOf('quiet-1')).toBeLessThanOrEqual(2);
    expect(order.indexOf('quiet-2')).toBeLessThanOrEqual(3);
    expect(order.slice(0, 4)).toEqual(['busy', 'quiet-1', 'quiet-2', 'busy']);
  });

  it('removes a waiting item on abort and returns it to the caller', async () => {
    const gate = deferred();
    const ran: string[] = [];
    const queue = createCommandQueue<Item>({
      limits: { main: 1, subagent: 1, cron: 1 },
      async execute(batch) {
        ran.push(batch[0]!.id);
        if (batch[0]!.id === 'a') await gate.promise;
      },
    });
    queue.enqueue(item('a', 's1'));
    queue.enqueue(item('b', 's1'));
    queue.enqueue(item('c', 's1'));
    await tick();
    const found = queue.abort('b', 'killed', 'stop');
    expect(found).toEqual({ state: 'queued', item: expect.objectContaining({ id: 'b' }) });
    expect(queue.has('b')).toBe(false);
    gate.resolve();
    await waitFor(() => ran.length === 2, 'both items run');
    expect(ran).toEqual(['a', 'c']);
    expect(queue.abort('zzz', 'killed', 'stop')).toEqual({ state: 'unknown' });
  });

  it('aborts the signal of a running batch with the kill reason', async () => {
    let seen: string | undefined;
    const queue = createCommandQueue<Item>({
      limits: { main: 1, subagent: 1, cron: 1 },
      execute: (_batch, signal) =>
        new Promise<void>((resolve) => {
          signal.addEventListener('abort', () => {
            seen = stopKindOf(signal);
            resolve();
          });
        }),
    });
    queue.enqueue(item('a', 's1'));
    await tick();
    expect(queue.abort('a', 'killed', 'user asked').state).toBe('running');
    await queue.idle();
    expect(seen).toBe('killed');
    expect(queue.has('a')).toBe(false);
  });

  it('times a batch out through its signal after timeoutMs', async () => {
    let seen: string | undefined;
    const started = Date.now();
    const queue = createCommandQueue<Item>({
      limits: { main: 1, subagent: 1, cron: 1 },
      execute: (_batch, signal) =>
        new Promise<void>((resolve) => {
          signal.addEventListener('abort', () => {
            seen = stopKindOf(signal);
            resolve();
          });
        }),
    });
    queue.enqueue(item('a', 's1', 'main', { timeoutMs: 30 }));
    await tick();
    await queue.idle();
    expect(seen).toBe('timeout');
    expect(Date.now() - started).toBeGreaterThanOrEqual(25);
  });

  it('starts nothing while paused and resumes in order', async () => {
    const ran: string[] = [];
    const queue = createCommandQueue<Item>({
      limits: { main: 1, subagent: 1, cron: 1 },
      async execute(batch) {
        ran.push(batch[0]!.id);
      },
    });
    queue.pause();
    queue.enqueue(item('a', 's1'));
    queue.enqueue(item('b', 's2'));
    await tick();
    expect(ran).toEqual([]);
    queue.resume();
    await waitFor(() => ran.length === 2, 'both items run');
    expect(ran).toEqual(['a', 'b']);
  });

  it('keeps going after an executor rejects', async () => {
    const ran: string[] = [];
    const queue = createCommandQueue<Item>({
      limits: { main: 1, subagent: 1, cron: 1 },
      async execute(batch) {
        ran.push(batch[0]!.id);
        if (batch[0]!.id === 'a') throw new Error('boom');
      },
    });
    queue.enqueue(item('a', 's1'));
    queue.enqueue(item('b', 's1'));
    await waitFor(() => ran.length === 2, 'both items run');
    expect(ran).toEqual(['a', 'b']);
  });
});

async function waitFor(predicate: () => boolean, what: string, timeoutMs = 2000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`waitFor: ${what} not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}
