// Benchmarks many sessions at once against a slow model on @colloquy/runtime: 200 distinct users each
// send one DM at the same moment; the model is the local OpenAI-compatible fake (@colloquy/testkit/openai-fake)
// answering after 0 ms or 1,000 ms, reached through the real AI SDK adapter (createModelRouter), on the
// SQLite store with group commit. Each case runs twice: with the old lane defaults (main 4, subagent 8,
// cron 2) and with the current defaults (provider limits at their defaults too).
//
//   replies/s     200 / (last reply sent - first message received)
//   latency       per user, message received -> reply sent: p50, p99, max
//   all answered  first message -> last reply, and last message -> last reply (target with 1,000 ms:
//                 <= 3 s after the last message)
//   heap          peak heap growth during the burst, and over the most turns running at once (runtime
//                 and fake share the process, so this is an upper bound of a turn's cost)
//
// Run with `pnpm bench` at the root (turbo builds dist/ first) or `node bench/concurrency.mjs` after
// `pnpm build`. `--strict` exits 1 when the 1,000 ms target is missed with the current defaults.
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { resolveConfig } from '@colloquy/core';
import { openSqliteStore } from '@colloquy/store-sqlite';
import { fakeReply, startOpenAIFake } from '@colloquy/testkit/openai-fake';
import { createModelRouter, createRuntime } from '../dist/index.js';
import { createBenchChannel } from './bench-channel.mjs';

const STRICT = process.argv.includes('--strict');
const USERS = 200;
const WARMUP_USERS = 20;
const TARGET_AFTER_LAST_MS = 3000;
const OLD_LANES = { main: 4, subagent: 8, cron: 2 };

const dir = mkdtempSync(join(tmpdir(), 'colloquy-concurrency-bench-'));

function inbound(user, text) {
  return {
    channel: 'bench',
    accountId: 'default',
    chat: { type: 'direct', id: `chat-${user}` },
    sender: { id: `user-${user}`, name: `User ${user}` },
    text,
    mentionsBot: true,
    messageId: `${user}-${text}`,
  };
}

/** Every user sends one message at once; resolves with [receivedAt, repliedAt] per user. */
async function burst(runtime, channel, users, prefix) {
  return Promise.all(
    users.map(async (user) => {
      const reply = channel.nextReply(`chat-${user}`);
      const receivedAt = performance.now();
      await runtime.receive(inbound(user, `${prefix} from ${user}`));
      return [receivedAt, await reply];
    }),
  );
}

const percentile = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];

async function runCase(latencyMs, lanes) {
  let delayMs = 0; // the warm-up runs at 0 ms so it costs the same whatever the lanes
  const fake = await startOpenAIFake(() => fakeReply.text('ok', delayMs > 0 ? { delayMs } : {}));
  const config = resolveConfig({
    agents: { defaults: { model: 'local/fake-model' } },
    models: { providers: { local: { kind: 'openai-compatible', baseURL: fake.baseURL } } },
    runtime: lanes ? { lanes } : {},
  });
  const store = openSqliteStore({
    file: join(dir, `c-${latencyMs}-${lanes ? 'old' : 'new'}.db`),
    groupCommit: true,
  });
  const channel = createBenchChannel();
  const runtime = createRuntime({ config, store, plugins: [channel], models: createModelRouter(config) });
  await runtime.start();
  await burst(
    runtime,
    channel,
    Array.from({ length: WARMUP_USERS }, (_, i) => `warm-${i}`),
    'warm-up',
  );

  delayMs = latencyMs;
  globalThis.gc?.();
  const heapBefore = process.memoryUsage().heapUsed;
  let heapPeak = heapBefore;
  let mostRunning = 0;
  const sampler = setInterval(() => {
    heapPeak = Math.max(heapPeak, process.memoryUsage().heapUsed);
    mostRunning = Math.max(mostRunning, runtime.stats().lanes.main.running);
  }, 20);
  const results = await burst(
    runtime,
    channel,
    Array.from({ length: USERS }, (_, i) => i),
    'hello',
  );
  clearInterval(sampler);

  const firstIn = Math.min(...results.map(([r]) => r));
  const lastIn = Math.max(...results.map(([r]) => r));
  const lastOut = Math.max(...results.map(([, s]) => s));
  const latencies = results.map(([r, s]) => s - r).sort((a, b) => a - b);
  await runtime.shutdown({ drainMs: 1000 });
  await fake.close();
  return {
    latencyMs,
    lanes: config.runtime.lanes,
    repliesPerSecond: USERS / ((lastOut - firstIn) / 1000),
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    max: latencies.at(-1),
    allAnsweredMs: lastOut - firstIn,
    afterLastMessageMs: lastOut - lastIn,
    maxInFlight: fake.maxInFlight,
    mostRunning,
    heapPeakMiB: (heapPeak - heapBefore) / 1024 / 1024,
  };
}

const ms = (v) => `${v.toFixed(0)} ms`;

async function main() {
  console.log(
    `@colloquy/runtime concurrency bench: node ${process.version}, ${cpus().length} CPUs, load ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
  console.log(
    `${USERS} distinct users x 1 DM at once, OpenAI-compatible fake over HTTP, SQLite with group commit.`,
  );
  let headline;
  for (const latencyMs of [0, 1000]) {
    for (const [label, lanes] of [
      ['before (old defaults)', OLD_LANES],
      ['after (defaults)', undefined],
    ]) {
      const r = await runCase(latencyMs, lanes);
      if (latencyMs === 1000 && !lanes) headline = r;
      const l = r.lanes;
      console.log(
        `  model ${String(latencyMs).padStart(4)} ms  ${label.padEnd(21)} lanes ${l.main}/${l.subagent}/${l.cron}: ` +
          `${r.repliesPerSecond.toFixed(1).padStart(7)} replies/s, latency p50 ${ms(r.p50)} p99 ${ms(r.p99)} ` +
          `max ${ms(r.max)}; all ${USERS} answered ${ms(r.allAnsweredMs)} after the first message ` +
          `(${ms(r.afterLastMessageMs)} after the last); at most ${r.mostRunning} turns running and ` +
          `${r.maxInFlight} model calls in flight; peak heap growth ${r.heapPeakMiB.toFixed(1)} MiB` +
          (r.mostRunning > 1
            ? ` (${((r.heapPeakMiB * 1024) / r.mostRunning).toFixed(0)} KiB per running turn)`
            : ''),
      );
    }
  }
  const ok = headline.afterLastMessageMs <= TARGET_AFTER_LAST_MS;
  console.log(
    `\nTarget (1,000 ms model, defaults): all ${USERS} answered within ${TARGET_AFTER_LAST_MS} ms of the last ` +
      `message: ${ms(headline.afterLastMessageMs)} ${ok ? 'OK' : 'MISSED'}`,
  );
  rmSync(dir, { recursive: true, force: true });
  if (STRICT && !ok) process.exitCode = 1;
}

await main();
