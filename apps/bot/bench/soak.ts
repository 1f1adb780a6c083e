// Soak of the reference app (issue 33 item 6): `colloquy start` as a child process, as users run it,
// under a steady web chat load with sub-agents, on SQLite (default) or PostgreSQL (`--postgres`, a
// throwaway local cluster). Visitors come and go: SOAK_VISITORS (default 20) are connected at a time,
// each sends SOAK_PER_VISITOR messages (default 60) and leaves for a new one, SOAK_RATE msg/s in all
// (default 20) for SOAK_MINUTES (default 30). Every SOAK_SPAWN_EVERY-th message (default 10) asks
// for a sub-agent, whose result is announced back. Every SOAK_SAMPLE_SECONDS (default 30) it samples
// the app: heap after a full GC and live handles (from a probe loaded into the app), RSS and open
// file descriptors (/proc), and database connections (PostgreSQL). It prints the samples, then the
// slopes after the first SOAK_WARMUP_MINUTES (default 5), and exits 1 when a message went
// unanswered or the heap grows faster than SOAK_MAX_HEAP_MB_PER_HOUR (default 5). SOAK_NODE_ARGS
// adds node flags to the app (`--heapsnapshot-signal=SIGUSR2`: `kill -USR2 <app pid>` writes a heap
// snapshot into the app's state directory's parent, to compare two of them).
//
// Every visitor is a new session, so the app's bounded caches fill as the soak goes on: the
// runtime's history cache (`runtime.historyCacheMiB`, 64 by default) and the web chat's recent
// messages (500 chats x `historyLimit`). The soak gives them small caps (SOAK_HISTORY_CACHE_MIB,
// default 4; `historyLimit` 2) so that they are full before the warm-up ends, and whatever grows
// after it is not a cache doing its job.
import { execFile } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { loadavg } from 'node:os';
import { promisify } from 'node:util';
import { type OpenAIFake, startOpenAIFake } from '@colloquy/testkit/openai-fake';
import { startTestPostgres, type TestPostgres } from '@colloquy/testkit/postgres';
import type WebSocket from 'ws';
import { type BenchApp, startBenchApp } from './e2e/app-child.js';
import { modelEnv } from './e2e/model-fake.js';
import { memoryMb } from './e2e/proc-stats.js';
import { OPEN_LIMITS, openVisitor } from './e2e/webchat-load.js';

const env = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const minutes = env('SOAK_MINUTES', 30);
const rate = env('SOAK_RATE', 20);
const visitors = env('SOAK_VISITORS', 20);
const perVisitor = env('SOAK_PER_VISITOR', 60);
const spawnEvery = env('SOAK_SPAWN_EVERY', 10);
const sampleSeconds = env('SOAK_SAMPLE_SECONDS', 30);
const warmupMinutes = env('SOAK_WARMUP_MINUTES', 5);
const maxHeapSlope = env('SOAK_MAX_HEAP_MB_PER_HOUR', 5);
const historyCacheMiB = env('SOAK_HISTORY_CACHE_MIB', 4);
const postgres = process.argv.includes('--postgres');
/** More node flags for the app, e.g. `--heapsnapshot-signal=SIGUSR2` to take heap snapshots of it. */
const extraNodeArgs = (process.env.SOAK_NODE_ARGS ?? '').split(' ').filter(Boolean);

const PROBE = new URL('./e2e/memory-probe.mjs', import.meta.url).href;
/** How long a visitor stays connected after its last message. */
const LINGER_MS = 30_000;
const PSQL = '/usr/lib/postgresql/15/bin/psql';
const MB = 1024 * 1024;
/** The ids the bench's messages carry, as `repliedIds` reads them. */
const MESSAGE_ID = /msg-[A-Za-z0-9-]+/g;
const SUBAGENT_TASK = 'Write one line on how the soak is going.';

/** One reading of the app under load. */
interface Sample {
  minute: number;
  heapMb: number;
  /** The V8 heap the app holds from the system, used or not. */
  heapTotalMb: number;
  /** Memory of C++ objects bound to JavaScript ones (buffers among them). */
  externalMb: number;
  rssMb: number;
  fds: number;
  handles: number;
  /** The app's event loop delay, p99 over the probe's last interval. */
  loopDelayMs: number;
  /** The CPU the app used over the probe's last interval, in % of one core. */
  cpuPercent: number;
  connections?: number;
  sent: number;
  answered: number;
  /** `sessions_spawn` calls the model made (one per turn that held a request for a helper). */
  spawnCalls: number;
  subagentRuns: number;
}

interface ChatMessage {
  role: string;
  content?: unknown;
}

/**
 * The model: a sub-agent answers one line; a turn whose messages ask for a helper gets one
 * `sessions_spawn` call first; every other turn answers `re: <ids>` with the ids of the messages it answers (those
 * after the last assistant message, or, after a tool round, those before it). An announce turn
 * carries no id and is answered `noted`.
 */
function startSoakModel(counts: { spawnCalls: number; subagentRuns: number }): Promise<OpenAIFake> {
  return startOpenAIFake((request) => {
    const messages = (request.body?.messages ?? []) as ChatMessage[];
    const text = (m: ChatMessage | undefined) =>
      typeof m?.content === 'string' ? m.content : JSON.stringify(m?.content ?? '');
    if (text(messages[0]).includes('You are a sub-agent')) {
      counts.subagentRuns++;
      return { text: 'It is going steadily.' };
    }
    const afterTool = messages.at(-1)?.role === 'tool';
    let i = messages.length - 1;
    while (i >= 0 && messages[i]!.role === 'tool') i--;
    if (afterTool && messages[i]?.role === 'assistant') i--;
    const asked: string[] = [];
    for (; i >= 0 && messages[i]!.role !== 'assistant'; i--) {
      if (messages[i]!.role === 'user') asked.unshift(text(messages[i]));
    }
    const ids = asked.flatMap((line) => line.match(MESSAGE_ID) ?? []);
    if (!afterTool && asked.some((line) => line.includes('with a helper'))) {
      counts.spawnCalls++;
      return { toolCalls: [{ name: 'sessions_spawn', arguments: { task: SUBAGENT_TASK } }] };
    }
    return { text: ids.length > 0 ? `re: ${ids.join(' ')}` : 'noted' };
  });
}

/** Least-squares slope of `y` over `x`. */
function slope(points: readonly { x: number; y: number }[]): number {
  const n = points.length;
  if (n < 2) return Number.NaN;
  const mx = points.reduce((s, p) => s + p.x, 0) / n;
  const my = points.reduce((s, p) => s + p.y, 0) / n;
  const num = points.reduce((s, p) => s + (p.x - mx) * (p.y - my), 0);
  const den = points.reduce((s, p) => s + (p.x - mx) ** 2, 0);
  return den === 0 ? 0 : num / den;
}

/** One line of the probe in the app (`e2e/memory-probe.mjs`). */
interface ProbeLine {
  heapUsed: number;
  heapTotal: number;
  external: number;
  handles: number;
  loopDelayP99Ms: number;
  cpuPercent: number;
}

/** The last line the probe in the app wrote. */
function lastProbe(file: string): ProbeLine | undefined {
  if (!existsSync(file)) return undefined;
  const lines = readFileSync(file, 'utf8').trim().split('\n');
  const line = lines.at(-1);
  return line ? (JSON.parse(line) as ProbeLine) : undefined;
}

async function main(): Promise<void> {
  const server: TestPostgres | undefined = postgres ? await startTestPostgres() : undefined;
  const databaseUrl = server ? await server.createDatabase() : undefined;
  const database = databaseUrl ? new URL(databaseUrl).pathname.slice(1) : undefined;
  const counts = { spawnCalls: 0, subagentRuns: 0 };
  const model = await startSoakModel(counts);
  const probeFile = `${process.env.TMPDIR ?? '/tmp'}/colloquy-soak-${process.pid}.jsonl`;
  let app: BenchApp | undefined;
  const open = new Set<WebSocket>();
  const sent = new Set<string>();
  const answered = new Set<string>();
  try {
    app = await startBenchApp({
      config: { runtime: { historyCacheMiB }, channels: { webchat: { ...OPEN_LIMITS, historyLimit: 2 } } },
      env: {
        ...modelEnv(model),
        ...(databaseUrl ? { COLLOQUY_DATABASE_URL: databaseUrl } : {}),
        SOAK_PROBE_FILE: probeFile,
        SOAK_PROBE_MS: String(Math.min(10_000, sampleSeconds * 1000)),
      },
      nodeArgs: ['--expose-gc', '--import', PROBE, ...extraNodeArgs],
    });
    const running = app;
    console.log(
      `colloquy soak: ${minutes} min at ${rate} msg/s, ${visitors} visitors at a time x ${perVisitor} messages, ` +
        `a sub-agent every ${spawnEvery}th message; store ${postgres ? 'PostgreSQL' : 'SQLite'}; load average ${loadavg()
          .map((l) => l.toFixed(1))
          .join(' ')}`,
    );
    const connections = async () => {
      if (!server || !database) return undefined;
      const sql = `SELECT count(*) FROM pg_stat_activity WHERE datname = '${database}'`;
      const { stdout } = await promisify(execFile)(PSQL, ['-X', '-A', '-t', '-c', sql, server.url]);
      return Number(stdout.trim());
    };
    const samples: Sample[] = [];
    const started = performance.now();
    const sample = async () => {
      const probe = lastProbe(probeFile);
      const connectionCount = await connections();
      const row: Sample = {
        minute: (performance.now() - started) / 60_000,
        heapMb: (probe?.heapUsed ?? Number.NaN) / MB,
        heapTotalMb: (probe?.heapTotal ?? Number.NaN) / MB,
        externalMb: (probe?.external ?? Number.NaN) / MB,
        rssMb: memoryMb(running.pid).rss,
        fds: readdirSync(`/proc/${running.pid}/fd`).length,
        handles: probe?.handles ?? Number.NaN,
        loopDelayMs: probe?.loopDelayP99Ms ?? Number.NaN,
        cpuPercent: probe?.cpuPercent ?? Number.NaN,
        ...(connectionCount === undefined ? {} : { connections: connectionCount }),
        sent: sent.size,
        answered: answered.size,
        ...counts,
      };
      samples.push(row);
      console.log(
        `${row.minute.toFixed(1).padStart(5)} min  heap ${row.heapMb.toFixed(1)} MB (of ${row.heapTotalMb.toFixed(1)})  ` +
          `external ${row.externalMb.toFixed(1)} MB  rss ${row.rssMb.toFixed(1)} MB  ` +
          `cpu ${row.cpuPercent.toFixed(0)}%  loop p99 ${row.loopDelayMs.toFixed(0)} ms  ` +
          `fds ${row.fds}  handles ${row.handles}${row.connections === undefined ? '' : `  db connections ${row.connections}`}  ` +
          `sent ${row.sent}  answered ${row.answered}  spawn calls ${row.spawnCalls}  sub-agent runs ${row.subagentRuns}`,
      );
    };

    // Visitors: each sends `perVisitor` messages, then leaves and a new one takes its place.
    const slots: { socket: WebSocket; left: number }[] = [];
    const join = async () => {
      const socket = await openVisitor(running.webchatUrl, (id) => answered.add(id));
      open.add(socket);
      return { socket, left: perVisitor };
    };
    for (let i = 0; i < visitors; i++) slots.push(await join());
    const total = Math.round(rate * minutes * 60);
    let n = 0;
    let nextSample = sampleSeconds * 1000;
    while (n < total) {
      const elapsed = performance.now() - started;
      const due = Math.min(total, Math.floor((elapsed / 1000) * rate) + 1);
      for (; n < due; n++) {
        const index = n % slots.length;
        let slot = slots[index]!;
        if (slot.left === 0) {
          // The leaving visitor stays long enough to read its last replies.
          const leaving = slot.socket;
          setTimeout(() => {
            leaving.close();
            open.delete(leaving);
          }, LINGER_MS).unref();
          slot = await join();
          slots[index] = slot;
        }
        slot.left--;
        const id = `msg-soak-${n}`;
        sent.add(id);
        const text = n % spawnEvery === 0 ? `please look into ${id} with a helper` : `hello ${id}`;
        slot.socket.send(JSON.stringify({ type: 'message', text }));
      }
      if (elapsed >= nextSample) {
        nextSample += sampleSeconds * 1000;
        await sample();
      }
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    const drainUntil = performance.now() + 60_000;
    while (
      (answered.size < sent.size || counts.subagentRuns < counts.spawnCalls) &&
      performance.now() < drainUntil
    ) {
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    await sample();
    report(samples, sent.size, answered.size);
  } finally {
    for (const socket of open) socket.terminate();
    await app?.stop();
    await model.close();
    await server?.stop();
    rmSync(probeFile, { force: true });
  }
}

/** Prints the slopes after the warm-up and sets the exit code. */
function report(samples: readonly Sample[], sentCount: number, answeredCount: number): void {
  const steady = samples.filter((s) => s.minute >= warmupMinutes);
  const perHour = (pick: (s: Sample) => number) =>
    slope(steady.map((s) => ({ x: s.minute / 60, y: pick(s) })));
  const range = (pick: (s: Sample) => number) => {
    const values = steady.map(pick);
    return `${Math.min(...values)}-${Math.max(...values)}`;
  };
  const heapSlope = perHour((s) => s.heapMb);
  console.log(`\nafter the ${warmupMinutes} min warm-up (${steady.length} samples):`);
  console.log(`  heap slope ${heapSlope.toFixed(2)} MB/h (limit ${maxHeapSlope})`);
  console.log(`  rss slope  ${perHour((s) => s.rssMb).toFixed(2)} MB/h`);
  // What of RSS is not the JavaScript heap: V8's reserve beyond it, buffers, and native memory
  // (SQLite's page cache, the allocator's free lists).
  console.log(
    `  heap held ${perHour((s) => s.heapTotalMb).toFixed(2)} MB/h, external ${perHour((s) => s.externalMb).toFixed(2)} MB/h`,
  );
  console.log(`  open fds   ${range((s) => s.fds)}`);
  console.log(`  handles    ${range((s) => s.handles)}`);
  console.log(
    `  app cpu    ${range((s) => Math.round(s.cpuPercent))} % of a core, loop delay p99 ${range((s) => Math.round(s.loopDelayMs))} ms`,
  );
  if (steady[0]?.connections !== undefined) {
    console.log(`  db connections ${range((s) => s.connections ?? Number.NaN)}`);
  }
  const lost = sentCount - answeredCount;
  console.log(`  messages sent ${sentCount}, answered ${answeredCount}, unanswered ${lost}`);
  const last = samples.at(-1);
  if (last) {
    // A turn that folded several messages asking for a helper spawns one: spawn calls, not
    // messages, are what the sub-agent runs should add up to.
    console.log(`  spawn calls ${last.spawnCalls}, sub-agent runs ${last.subagentRuns}`);
  }
  if (lost > 0 || !(heapSlope <= maxHeapSlope)) process.exitCode = 1;
}

await main();
