import { type ColloquyConfigInput, createSessionTools, resolveConfig } from '@colloquy/core';
import type { RunRecord } from '@colloquy/core/gateway';
import type { ModelRequest } from '@colloquy/core/model';
import { type DeliveryRecord, MemoryStore } from '@colloquy/core/store';
import { createWebChatPlugin } from '@colloquy/plugin-webchat';
import { createRuntime } from '@colloquy/runtime';
import type { PostgresStore } from '@colloquy/store-postgres';
import { createMemoryChannel, makeSessionRecord, messageText, type ScriptFn } from '@colloquy/testkit';
import { startTestPostgres, type TestPostgres } from '@colloquy/testkit/postgres';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { createPostgresCluster } from '../src/index.js';
import { type Instance, startInstance, stopInstances } from './support/instances.js';
import { until } from './support/until.js';

let server: TestPostgres;
beforeAll(async () => {
  server = await startTestPostgres();
});
afterAll(async () => {
  await server?.stop();
});

afterEach(stopInstances);

/** The turns of one session as [start, end] of their leaders, oldest first. */
function turnIntervals(runs: readonly RunRecord[]): [number, number][] {
  return runs
    .filter((run) => run.meta?.foldedInto === undefined && run.startedAt !== undefined)
    .map((run): [number, number] => [run.startedAt!, run.endedAt ?? Number.POSITIVE_INFINITY])
    .sort((a, b) => a[0] - b[0]);
}

describe('several runtimes on one PostgreSQL', () => {
  it('runs every message once, on both instances, never two turns of one session at once', async () => {
    const url = await server.createDatabase();
    const a = await startInstance(url);
    const b = await startInstance(url);
    const sessions = Array.from({ length: 12 }, (_, i) => `agent:main:memory:dm:user${i}`);
    for (const key of sessions) await a.store.putSession(makeSessionRecord(key, { kind: 'dm' }));
    const runIds: string[] = [];
    for (let round = 0; round < 5; round++) {
      const sent = sessions.map((sessionKey, i) =>
        (i % 2 === 0 ? a : b).runtime.gateway.call('agent', {
          sessionKey,
          message: `m${round}`,
          deliver: false,
        }),
      );
      for (const result of await Promise.all(sent)) runIds.push(result.runId);
    }
    // Waited on the instance that did not necessarily run them.
    const ended = await Promise.all(
      runIds.map((runId, i) =>
        (i % 2 === 0 ? b : a).runtime.gateway.call('agent.wait', { runId, timeoutMs: 20_000 }),
      ),
    );
    expect(ended.map((result) => result.status)).toEqual(runIds.map(() => 'done'));
    expect(a.model.callCount).toBeGreaterThan(0);
    expect(b.model.callCount).toBeGreaterThan(0);
    for (const sessionKey of sessions) {
      const runs = await a.store.listRuns({ sessionKey });
      expect(runs).toHaveLength(5);
      const turns = turnIntervals(runs);
      for (let i = 1; i < turns.length; i++) expect(turns[i]![0]).toBeGreaterThanOrEqual(turns[i - 1]![1]);
      // Every message is in the transcript exactly once.
      const transcript = await a.store.readTail(sessionKey, 100);
      const inputs = transcript.filter((m) => m.role === 'user').map((m) => m.content);
      expect(inputs.sort()).toEqual(['m0', 'm1', 'm2', 'm3', 'm4']);
    }
  });

  it('folds messages queued behind a running turn into one turn, whichever instance queued them', async () => {
    const url = await server.createDatabase();
    // The first turn holds in its model call until the others are queued behind it.
    let releaseFirst!: () => void;
    const firstHeld = new Promise<void>((resolve) => {
      releaseFirst = resolve;
    });
    const script: ScriptFn = async (request) => {
      const last = request.messages.at(-1);
      const text = typeof last?.content === 'string' ? last.content : 'wake';
      if (text.includes('first')) await firstHeld;
      return `re: ${text}`;
    };
    const a = await startInstance(url, { delayMs: 0, script });
    const b = await startInstance(url, { delayMs: 0, script });
    const sessionKey = 'agent:main:memory:dm:folder';
    await a.store.putSession(makeSessionRecord(sessionKey, { kind: 'dm' }));
    const first = await a.runtime.gateway.call('agent', { sessionKey, message: 'first', deliver: false });
    const deadline = Date.now() + 10_000;
    while (a.model.callCount + b.model.callCount === 0) {
      if (Date.now() > deadline) throw new Error('the first turn did not reach the model within 10 s');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const later = await Promise.all(
      ['second', 'third', 'fourth'].map((message, i) =>
        (i % 2 ? a : b).runtime.gateway.call('agent', { sessionKey, message, deliver: false }),
      ),
    );
    releaseFirst();
    for (const { runId } of [first, ...later]) {
      await a.runtime.gateway.call('agent.wait', { runId, timeoutMs: 10_000 });
    }
    const runs = await a.store.listRuns({ sessionKey });
    expect(turnIntervals(runs)).toHaveLength(2);
    expect(a.model.callCount + b.model.callCount).toBe(2);
  });

  it('gives each watcher one notice and one wake, whichever instance queued, ran or fired it', async () => {
    const url = await server.createDatabase();
    // Each watcher may see its target (visibility agent): a watch is guarded when set and when it fires.
    const seesAgent = { config: { tools: { sessions: { visibility: 'agent' as const } } } };
    const a = await startInstance(url, { delayMs: 40, ...seesAgent });
    const b = await startInstance(url, { delayMs: 40, ...seesAgent });
    const pairs = Array.from({ length: 6 }, (_, i) => ({
      watcher: `agent:main:memory:dm:watcher${i}`,
      target: `agent:main:memory:dm:target${i}`,
    }));
    for (const { watcher, target } of pairs) {
      await a.store.putSession(makeSessionRecord(watcher, { kind: 'dm' }));
      await a.store.putSession(makeSessionRecord(target, { kind: 'dm' }));
    }
    const queued = await Promise.all(
      pairs.map(({ watcher, target }, i) =>
        (i % 2 ? a : b).runtime.gateway.call('agent', {
          sessionKey: target,
          message: `task ${i}`,
          deliver: false,
          watchBy: watcher,
        }),
      ),
    );
    for (const { runId } of queued) await a.runtime.gateway.call('agent.wait', { runId, timeoutMs: 10_000 });
    const notices = async (key: string) =>
      (await a.store.readTail(key, 50)).filter((m) => m.details?.watch !== undefined);
    const deadline = Date.now() + 10_000;
    for (const { watcher } of pairs) {
      while ((await a.store.listRuns({ sessionKey: watcher })).filter((r) => r.endedAt).length === 0) {
        if (Date.now() > deadline) throw new Error(`no wake turn of ${watcher}`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    }
    // More changes after the notices notify nobody. A sentinel session watches every target too:
    // the sweep that fires its watch deletes every due watch of that target in one transaction,
    // so once the sentinel's watches are gone, each target's change was swept.
    const sentinel = 'agent:main:memory:dm:sentinel';
    await a.store.putSession(makeSessionRecord(sentinel, { kind: 'dm' }));
    for (const { target } of pairs) {
      const afterVersion = (await a.store.getSession(target))!.stateVersion!;
      await a.store.putWatch({
        watcherKey: sentinel,
        targetKey: target,
        afterVersion,
        id: target,
        createdAt: 0,
      });
    }
    await Promise.all(
      pairs.map(({ target }) =>
        b.runtime.gateway.call('sessions.patch', { key: target, patch: { label: `${target}-later` } }),
      ),
    );
    await until(
      async () => (await a.store.listWatches({ watcherKey: sentinel })).length === 0,
      'the sweeps of the later changes (the sentinel’s watches fired)',
    );
    for (const { watcher } of pairs) {
      expect(await notices(watcher)).toHaveLength(1);
      expect(await a.store.listRuns({ sessionKey: watcher })).toHaveLength(1);
    }
    expect(await a.store.listWatches()).toEqual([]);
  });

  it('keeps a reply’s job until its delivery is recorded, so an instance killed in between leaves it to another', async () => {
    const url = await server.createDatabase();
    let release!: () => void;
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    // The store takes a delivery outcome only once released: as an instance that dies before it could.
    const holdingOutcomes = (store: PostgresStore) =>
      new Proxy(store, {
        get(target, name) {
          if (name === 'recordDeliveries') {
            return async (records: readonly DeliveryRecord[]) => {
              if (records.some((record) => record.state.status === 'delivered')) await released;
              return target.recordDeliveries(records);
            };
          }
          const value = Reflect.get(target, name, target);
          return typeof value === 'function' ? value.bind(target) : value;
        },
      });
    const channel = createMemoryChannel();
    const a = await startInstance(url, { plugins: [channel], wrapStore: holdingOutcomes });
    const runJobs = async () =>
      (
        await a.store.sql<{ n: number }>(
          "SELECT count(*)::int AS n FROM graphile_worker.jobs WHERE task_identifier = 'colloquy_run_main'",
        )
      )[0]!.n;
    await channel.inject({ text: 'hello', sender: { id: 'user-1', name: 'Ada' } });
    await channel.waitForSent(1, 10_000);
    // Long enough for the job to have ended, had it not waited for the record.
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(await runJobs()).toBe(1);
    release();
    await until(async () => (await runJobs()) === 0, 'the job ended once the outcome was recorded');
    const [run] = await a.store.listRuns({ limit: 1 });
    expect(run?.meta?.delivery).toMatchObject({ status: 'delivered' });
  });

  it('aborts a run that another instance is running', async () => {
    const url = await server.createDatabase();
    const a = await startInstance(url, { delayMs: 5000 });
    const b = await startInstance(url, { delayMs: 5000 });
    const sessionKey = 'agent:main:memory:dm:slow';
    await a.store.putSession(makeSessionRecord(sessionKey, { kind: 'dm' }));
    const { runId } = await a.runtime.gateway.call('agent', { sessionKey, message: 'slow', deliver: false });
    // Wait until one instance is inside the model call, so the abort must cross instances.
    const deadline = Date.now() + 10_000;
    while (a.model.callCount + b.model.callCount === 0) {
      if (Date.now() > deadline) throw new Error('neither instance called the model within 10 s');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect((await a.store.getRun(runId))?.status).toBe('running');
    const runner = a.model.callCount > 0 ? a : b;
    const other = runner === a ? b : a;
    expect(other.model.callCount).toBe(0);
    // The model would take 5 s; the run is killed when the abort returns, not when the model is done.
    const abortedAt = Date.now();
    await other.runtime.gateway.call('agent.abort', { runId });
    expect((await a.store.getRun(runId))?.status).toBe('killed');
    expect(Date.now() - abortedAt).toBeLessThan(4000);
    expect(runner.model.callCount + other.model.callCount).toBe(1);
  });

  it('kills a sub-agent that yielded, from another instance: it is listed, announced, and never woken', async () => {
    const url = await server.createDatabase();
    const main = 'agent:main:main';
    const config: ColloquyConfigInput = {
      agents: { defaults: { subagents: { maxSpawnDepth: 2 } } },
      tools: { subagents: { tools: { allow: ['sessions_spawn', 'sessions_yield'] } } },
    };
    const texts = (request: ModelRequest) =>
      request.messages.filter((m) => m.role === 'user').map((m) => messageText(m));
    const taskOf = (request: ModelRequest) => texts(request)[0]?.split('\n').at(-1);
    const isChild = (request: ModelRequest) => taskOf(request) === 'child work';
    // C spawns G and yields (8 s at most: the kill must come before the yield's timeout, which took
    // over a second on 2 cores at load 40); G takes 30 s; were C woken, it would spawn again.
    const script: ScriptFn = (request) => {
      if (!request.system.includes('You are a sub-agent')) return 'noted';
      if (taskOf(request) === 'grandchild work') return { text: 'never', delayMs: 30_000 };
      const tail = request.messages.at(-1);
      if (tail?.role === 'toolResult' && tail.toolName === 'sessions_spawn') {
        return { toolCalls: [{ name: 'sessions_yield', arguments: { timeoutSeconds: 8 } }] };
      }
      return { toolCalls: [{ name: 'sessions_spawn', arguments: { task: 'grandchild work' } }] };
    };
    const a = await startInstance(url, { delayMs: 0, script, config });
    const b = await startInstance(url, { delayMs: 0, script, config });
    await a.store.putSession(makeSessionRecord(main, { kind: 'main' }));
    const toolsOf = (instance: Instance) =>
      Object.fromEntries(
        createSessionTools({
          requesterKey: main,
          agentId: 'main',
          config: instance.config,
          gateway: instance.runtime.gateway,
        }).map((tool) => [tool.name, tool]),
      );
    const callTool = async <T>(instance: Instance, name: string, args: unknown) =>
      JSON.parse((await toolsOf(instance)[name]!.execute('call', args as never)).content[0].text) as T;

    const { childSessionKey: child } = await callTool<{ childSessionKey: string }>(a, 'sessions_spawn', {
      task: 'child work',
      label: 'C',
    });
    await until(
      async () => {
        const runs = await a.store.listRuns({ sessionKey: child });
        return (await a.store.getSession(child))?.meta?.yield !== undefined && runs[0]?.status === 'done';
      },
      'C yields',
      5000,
    );
    const { deadline: yieldDeadline } = (await a.store.getSession(child))!.meta!.yield as {
      deadline: number;
    };
    await until(
      async () => (await a.store.listRuns({ spawnedBy: child }))[0]?.status === 'running',
      'G runs',
      5000,
    );
    const [grandchildRun] = await a.store.listRuns({ spawnedBy: child });

    const killed = await callTool<{ count: number; killed: { sessionKey: string; runIds: string[] }[] }>(
      b,
      'subagents',
      { action: 'kill', target: 'C' },
    );
    if (Date.now() >= yieldDeadline) {
      throw new Error('the kill came after the yield had timed out, so a wake of C proves nothing here');
    }
    expect(killed.count).toBe(2);
    expect(killed.killed).toEqual([
      { sessionKey: child, runIds: [expect.any(String)] },
      { sessionKey: grandchildRun!.sessionKey, runIds: [grandchildRun!.runId] },
    ]);
    await until(
      async () => (await a.store.listOutbox({ statuses: ['pending'] })).length === 0,
      'the announces were delivered',
      5000,
    );
    // Past the yield's stored deadline (the scenario: whichever instance armed its timer fires it
    // then), and past the announces' wakes of the requesters. Neither leaves a trace when it rightly
    // does nothing, so this waits out the deadline, plus 500 ms for a fired timer or a wake to store
    // a run of C (a few store round trips).
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, yieldDeadline - Date.now()) + 500));
    const killedRows = (await a.store.listOutbox({ statuses: ['delivered'] })).filter(
      (row) => (row.payload as { status?: string }).status === 'killed',
    );
    expect(killedRows.map((row) => row.childSessionKey).sort()).toEqual(
      [child, grandchildRun!.sessionKey].sort(),
    );
    expect((await a.store.listRuns({ sessionKey: child })).map((run) => run.status).sort()).toEqual([
      'done',
      'killed',
    ]);
    expect(await a.runtime.wake(child)).toBeUndefined();
    expect(await b.runtime.wake(child)).toBeUndefined();
    expect([...a.model.requests, ...b.model.requests].filter(isChild)).toHaveLength(2);
  });

  it('refuses a store other than PostgreSQL with a clear message', async () => {
    const url = await server.createDatabase();
    const cluster = await createPostgresCluster({ url });
    const runtime = createRuntime({ config: resolveConfig({}), store: new MemoryStore(), cluster });
    await runtime.start();
    await expect(runtime.gateway.call('agent', { sessionKey: 'main', message: 'hi' })).rejects.toThrow(
      /needs the PostgreSQL store/,
    );
    await runtime.shutdown({ drainMs: 0 });
  });
});

describe('channel leases', () => {
  it('grants a lease to one instance and hands it over when the holder’s connection dies', async () => {
    const url = await server.createDatabase();
    const one = await createPostgresCluster({ url, leaseRetryMs: 50, instanceId: 'one' });
    const two = await createPostgresCluster({ url, leaseRetryMs: 50, instanceId: 'two' });
    const held = await one.lease('telegram:42');
    let taken = false;
    const standby = two.lease('telegram:42').then((lease) => {
      taken = true;
      return lease;
    });
    // The standby asks again every 50 ms on its own connection: once its asks were seen refused
    // twice (new start times of the lock query beyond the holder's one), it had its chance.
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    const asks = new Set<string>();
    await until(async () => {
      const { rows } = await admin.query<{ at: Date }>(
        `SELECT query_start AS at FROM pg_stat_activity
         WHERE query LIKE '%pg_try_advisory_lock%' AND pid <> pg_backend_pid()`,
      );
      for (const { at } of rows) asks.add(at.toISOString());
      return asks.size >= 3;
    }, 'the standby was refused the lease twice');
    expect(taken).toBe(false);
    // Kill the holder's lease connection the way a dead process would lose it.
    await admin.query(
      `SELECT pg_terminate_backend(l.pid) FROM pg_locks l
       WHERE l.locktype = 'advisory' AND l.granted AND l.classid = $1`,
      [0x436f_6c02],
    );
    await admin.end();
    const lease = await standby;
    expect(held.lost.aborted).toBe(true);
    expect(lease.lost.aborted).toBe(false);
    await lease.release();
    await one.stop();
    await two.stop();
  });
});

describe('the web chat on several instances', () => {
  it('shows a visitor the reply whichever instance ran the turn', async () => {
    const url = await server.createDatabase();
    const started: { instance: Instance; base: string }[] = [];
    for (let i = 0; i < 2; i++) {
      const webchat = createWebChatPlugin({
        cookieSecret: 'c'.repeat(32),
        adminToken: 'a'.repeat(32),
        config: { port: 0 },
      });
      const instance = await startInstance(url, { delayMs: 30, plugins: [webchat] });
      started.push({ instance, base: webchat.address()!.replace(/\/$/, '') });
    }
    // Every visitor talks to the first instance; the turns run on either.
    const visitors = await Promise.all(
      Array.from({ length: 10 }, async (_, i) => {
        const socket = new WebSocket(`${started[0]!.base.replace('http', 'ws')}/ws`, {
          headers: { origin: started[0]!.base },
        });
        const texts: string[] = [];
        socket.on('message', (data) => {
          const frame = JSON.parse(String(data)) as {
            type: string;
            message?: { role: string; text: string };
          };
          if (frame.type === 'message' && frame.message?.role === 'assistant') texts.push(frame.message.text);
        });
        await new Promise((resolve) => socket.once('open', resolve));
        socket.send(JSON.stringify({ type: 'message', text: `hello ${i}`, clientId: `v${i}` }));
        return { socket, texts, i };
      }),
    );
    const deadline = Date.now() + 10_000;
    while (visitors.some((v) => !v.texts.includes(`re: hello ${v.i}`)) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    for (const v of visitors) {
      expect(v.texts, `visitor ${v.i}`).toContain(`re: hello ${v.i}`);
      v.socket.close();
    }
    expect(started[1]!.instance.model.callCount, 'some turns ran on the other instance').toBeGreaterThan(0);
  });
});
