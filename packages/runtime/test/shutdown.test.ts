import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isColloquyError } from '@colloquy/core';
import { openSqliteStore } from '@colloquy/store-sqlite';
import { makeRunRecord, makeSessionRecord } from '@colloquy/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { installSignalHandlers } from '../src/index.js';
import { type Harness, startHarness, waitFor } from './support/harness.js';

const MAIN = 'agent:main:main';
let h: Harness | undefined;
let dir: string | undefined;

afterEach(async () => {
  await h?.close();
  h = undefined;
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

function dbFile(): string {
  dir = mkdtempSync(join(tmpdir(), 'colloquy-shutdown-'));
  return join(dir, 'colloquy.db');
}

describe('graceful shutdown and restart', () => {
  it('lets a running turn finish within the drain budget, then stops plugins and closes the store', async () => {
    h = await startHarness({ script: [{ text: 'finished', delayMs: 100 }] });
    const { runId } = await h.runtime.gateway.call('agent', { sessionKey: 'main', message: 'hi' });
    await h.model.waitForRequests(1);
    const store = h.store;
    await h.runtime.shutdown({ drainMs: 3000 });
    expect(h.runtime.state).toBe('stopped');
    expect(h.channel.running).toBe(false);
    await expect(store.getRun(runId)).rejects.toThrow();
  });

  it('asks channels to stop receiving before it stops accepting, and delivers replies after', async () => {
    h = await startHarness({ script: [{ text: 'answer to the last one', delayMs: 50 }] });
    const channel = h.channel;
    const order: string[] = [];
    let inFlight: Promise<unknown> | undefined;
    // A channel whose last message arrives while it is being told to stop receiving.
    (channel as { stopReceiving?: () => Promise<void> }).stopReceiving = async () => {
      order.push('stopReceiving');
      inFlight = h!.runtime.receive(channel.toInbound({ text: 'the last one', sender: { id: 'u9' } }));
      await inFlight;
    };
    await h.runtime.shutdown({ drainMs: 3000 });
    expect(order).toEqual(['stopReceiving']);
    await expect(inFlight).resolves.toMatchObject({ action: 'queued' });
    expect(channel.sent.map((s) => s.message.text)).toEqual(['answer to the last one']);
  });

  it('refuses new work once shutdown began', async () => {
    h = await startHarness({ script: [{ text: 'slow', delayMs: 300 }] });
    await h.runtime.gateway.call('agent', { sessionKey: 'main', message: 'hi' });
    await h.model.waitForRequests(1);
    const stopping = h.runtime.shutdown({ drainMs: 2000 });
    // Channels stop receiving first; then the runtime refuses, saying so (nothing is dropped silently).
    await new Promise((resolve) => setImmediate(resolve));
    const refused = await h.runtime.gateway
      .call('agent', { sessionKey: 'main', message: 'more' })
      .catch((e: unknown) => e);
    expect(isColloquyError(refused) && refused.code).toBe('ABORTED');
    const late = await h.runtime.receive(h.channel.toInbound('late')).catch((e: unknown) => e);
    expect(isColloquyError(late) && late.code).toBe('ABORTED');
    await stopping;
  });

  it('re-queues turns cut by the drain budget, and a restart runs them once without repeating the user message', async () => {
    const file = dbFile();
    h = await startHarness({
      store: openSqliteStore({ file }),
      script: [{ text: 'never', delayMs: 30_000 }],
    });
    const cut = await h.runtime.gateway.call('agent', {
      sessionKey: 'main',
      message: 'first',
      deliver: false,
    });
    await h.model.waitForRequests(1);
    const waiting = await h.runtime.gateway.call('agent', {
      sessionKey: 'main',
      message: 'second',
      extraSystemPrompt: 'separate turn',
    });
    // The model would take 30 s, beyond the test's timeout: shutdown cut it after the drain budget.
    await h.runtime.shutdown({ drainMs: 50 });

    const store = openSqliteStore({ file });
    expect(await store.getRun(cut.runId)).toMatchObject({ status: 'queued', attempts: 1 });
    expect(await store.getRun(waiting.runId)).toMatchObject({ status: 'queued', attempts: 0 });
    h = await startHarness({ store, script: ['resumed first', 'resumed second'], start: false });
    const report = await h.runtime.start();
    expect(report.requeued).toEqual(expect.arrayContaining([cut.runId, waiting.runId]));
    const done = await h.runtime.gateway.call('agent.wait', { runId: waiting.runId, timeoutMs: 5000 });
    expect(done.status).toBe('done');
    expect(await h.store.getRun(cut.runId)).toMatchObject({
      status: 'done',
      reply: 'resumed first',
      attempts: 2,
    });
    const users = (await h.store.readTail(MAIN, 20)).filter((m) => m.role === 'user').map((m) => m.content);
    expect(users).toEqual(['first', 'second']);
  });

  it('on start resumes fresh runs left running by a crash and marks stale ones interrupted', async () => {
    const file = dbFile();
    const store = openSqliteStore({ file });
    const now = Date.now();
    await store.putSession(makeSessionRecord(MAIN, { kind: 'main', status: 'running' }));
    await store.putSession(makeSessionRecord('agent:main:other', { kind: 'other', status: 'running' }));
    await store.createRun(
      makeRunRecord('fresh', MAIN, {
        status: 'running',
        attempts: 1,
        updatedAt: now - 1000,
        createdAt: now - 2000,
        message: 'resume me',
      }),
    );
    await store.createRun(
      makeRunRecord('stale', 'agent:main:other', {
        status: 'running',
        attempts: 1,
        updatedAt: now - 3_600_000,
      }),
    );
    await store.createRun(
      makeRunRecord('looping', MAIN, {
        status: 'running',
        attempts: 3,
        updatedAt: now - 1000,
        createdAt: now - 1500,
      }),
    );
    h = await startHarness({ store, script: ['resumed'], start: false });
    const report = await h.runtime.start();
    expect(report).toEqual({
      resumed: ['fresh'],
      interrupted: expect.arrayContaining(['stale', 'looping']),
      requeued: [],
    });
    await waitFor(async () => (await h!.store.getRun('fresh'))?.status === 'done');
    expect(await h.store.getRun('stale')).toMatchObject({
      status: 'interrupted',
      error: expect.stringContaining('staleRunMinutes'),
    });
    expect(await h.store.getRun('looping')).toMatchObject({
      status: 'interrupted',
      error: expect.stringContaining('maxRunAttempts'),
    });
    expect((await h.store.getSession('agent:main:other'))?.status).toBe('error');
  });
});

/** A runtime whose shutdown records its options and ends when released. */
function heldShutdown() {
  const calls: unknown[] = [];
  let done: () => void = () => {};
  const runtime = {
    shutdown: (options?: { drainMs?: number }) => {
      calls.push(options);
      return new Promise<void>((resolve) => {
        done = resolve;
      });
    },
  };
  return { runtime, calls, release: () => done() };
}

describe('installSignalHandlers', () => {
  it('ignores the same signal repeated at once (one Ctrl-C forwarded by pnpm) and exits 0', async () => {
    const codes: number[] = [];
    const uninstall = installSignalHandlers(
      { shutdown: () => new Promise<void>((resolve) => setTimeout(resolve, 20)) },
      { signals: ['SIGUSR2'], exit: (code) => codes.push(code) },
    );
    try {
      process.emit('SIGUSR2', 'SIGUSR2');
      process.emit('SIGUSR2', 'SIGUSR2');
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(codes).toEqual([0]);
    } finally {
      uninstall();
    }
  });

  it('routes the first signal to shutdown and exits 0; a second signal exits 1 at once', async () => {
    const codes: number[] = [];
    const { runtime, calls, release } = heldShutdown();
    const uninstall = installSignalHandlers(runtime, {
      signals: ['SIGUSR2'],
      exit: (code) => codes.push(code),
      drainMs: 10,
      repeatWindowMs: 0,
    });
    try {
      process.emit('SIGUSR2', 'SIGUSR2');
      expect(calls).toEqual([{ drainMs: 10 }]);
      process.emit('SIGUSR2', 'SIGUSR2');
      expect(codes).toEqual([1]);
      release();
      await new Promise((resolve) => setImmediate(resolve));
      expect(codes).toEqual([1, 0]);
    } finally {
      uninstall();
    }
    expect(process.listenerCount('SIGUSR2')).toBe(0);
  });

  it('takes the same path after a failure and exits 1; a signal during that shutdown exits 1 at once', async () => {
    const codes: number[] = [];
    const { runtime, calls, release } = heldShutdown();
    const failure = new AbortController();
    const uninstall = installSignalHandlers(runtime, {
      signals: ['SIGUSR2'],
      exit: (code) => codes.push(code),
      drainMs: 10,
      failure: failure.signal,
    });
    try {
      failure.abort(new Error('lost the control connection'));
      expect(calls).toEqual([{ drainMs: 10 }]);
      release();
      await new Promise((resolve) => setImmediate(resolve));
      expect(codes).toEqual([1]);
      process.emit('SIGUSR2', 'SIGUSR2');
      expect(codes).toEqual([1, 1]);
      expect(calls).toHaveLength(1);
    } finally {
      uninstall();
    }
  });

  it('keeps exit code 0 for a signal whose shutdown meets a failure', async () => {
    const codes: number[] = [];
    const failure = new AbortController();
    const uninstall = installSignalHandlers(
      {
        shutdown: async () => {
          failure.abort(new Error('the control connection closed with the shutdown'));
        },
      },
      { signals: ['SIGUSR2'], exit: (code) => codes.push(code), failure: failure.signal },
    );
    try {
      process.emit('SIGUSR2', 'SIGUSR2');
      await new Promise((resolve) => setImmediate(resolve));
      expect(codes).toEqual([0]);
    } finally {
      uninstall();
    }
  });
});
