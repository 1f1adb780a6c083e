// Benchmarks @colloquy/store-sqlite against the layout it replaces: a session index in one JSON file
// and one JSONL file per transcript (read the whole index, parse, filter; read the whole JSONL, take
// the tail), and against a careful implementation of that layout for sessions.list (the index parsed
// once and kept in memory, newest first). Run with `pnpm bench` at the root (turbo builds dist/ first) or `node bench/run.mjs`.
// `--strict` exits 1 when a target is missed.
import { appendFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Bench } from 'tinybench';
import { openSqliteStore } from '../dist/index.js';
import { prng } from './search-data.mjs';

const SESSIONS = 10_000;
const LIST_LIMIT = 200;
const BIG_TRANSCRIPT = 50_000;
const SMALL_TRANSCRIPT = 100;
const TAIL = 20;
const APPEND_SESSIONS = 100;
const APPEND_MESSAGES = 20_000;
const APPEND_MESSAGES_FULL = 300;
const NOW = Date.now();
const KINDS = [
  ['dm', 0.4],
  ['group', 0.25],
  ['subagent', 0.25],
  ['cron', 0.05],
  ['main', 0.02],
  ['other', 0.03],
];

const dir = mkdtempSync(join(tmpdir(), 'colloquy-bench-'));
const results = [];

const random = prng(42);

function pickKind() {
  let r = random();
  for (const [kind, share] of KINDS) {
    r -= share;
    if (r <= 0) return kind;
  }
  return 'other';
}

function sessionRecord(i) {
  const kind = pickKind();
  const agentId = i % 7 === 0 ? 'ops' : 'main';
  const key = `agent:${agentId}:${kind === 'group' ? 'telegram:group' : kind}:${i}`;
  const updatedAt = NOW - Math.floor(random() * 48 * 3_600_000);
  return {
    key,
    sessionId: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
    agentId,
    kind,
    createdAt: updatedAt - 3_600_000,
    updatedAt,
    channel: 'telegram',
    chatType: kind === 'group' ? 'group' : 'direct',
    displayName: `Session ${i}`,
    deliveryContext: { channel: 'telegram', to: String(100_000 + i), accountId: 'default' },
    model: 'openai/gpt-4o-mini',
    usage: { inputTokens: 1200 + i, outputTokens: 300, totalTokens: 1500 + i, contextTokens: 900 },
    status: 'done',
    ...(kind === 'subagent' ? { spawnedBy: 'agent:main:main', spawnDepth: 1 } : {}),
    ...(kind === 'subagent' && random() < 0.5 ? { archivedAt: updatedAt + 60_000 } : {}),
  };
}

function message(i) {
  const text = `Message number ${i}. ${'Lorem ipsum dolor sit amet, consectetur adipiscing elit. '.repeat(3)}`;
  return i % 2 === 0
    ? { role: 'user', content: text, timestamp: NOW + i, sender: { id: '42', name: 'Ada' } }
    : {
        role: 'assistant',
        content: [{ type: 'text', text }],
        timestamp: NOW + i,
        runId: `run-${i >> 1}`,
        usage: { inputTokens: 1000, outputTokens: 120, totalTokens: 1120 },
      };
}

// --- baseline: the JSON index + JSONL transcripts layout ---

const newestFirst = (a, b) => b.updatedAt - a.updatedAt || (a.key < b.key ? -1 : 1);
const cutoffOf = (query) =>
  query.activeMinutes === undefined ? -Infinity : NOW - query.activeMinutes * 60_000;
const listed = (s, query) =>
  s.archivedAt === undefined && (query.kinds === undefined || query.kinds.includes(s.kind));

function baselineList(indexFile, query) {
  const index = JSON.parse(readFileSync(indexFile, 'utf8'));
  const cutoff = cutoffOf(query);
  return Object.values(index)
    .filter((s) => listed(s, query) && s.updatedAt >= cutoff)
    .sort(newestFirst)
    .slice(0, query.limit);
}

/**
 * What a careful implementation of the JSON index would do: parse it once at start, keep it in
 * memory sorted newest first (a writer moves a session to the front), and scan only until `limit`
 * sessions matched or the activity cutoff is passed.
 */
function memoryIndex(indexFile) {
  const sessions = Object.values(JSON.parse(readFileSync(indexFile, 'utf8'))).sort(newestFirst);
  return (query) => {
    const cutoff = cutoffOf(query);
    const out = [];
    for (const s of sessions) {
      if (s.updatedAt < cutoff || out.length === query.limit) break;
      if (listed(s, query)) out.push(s);
    }
    return out;
  };
}

function baselineTail(jsonlFile, limit) {
  const lines = readFileSync(jsonlFile, 'utf8').split('\n');
  if (lines.at(-1) === '') lines.pop();
  return lines.slice(-limit).map((line) => JSON.parse(line));
}

// --- measuring ---

/** Runs each task for about `time` ms and returns latency statistics in ms, with p95 from the samples. */
async function measure(tasks, time = 1000) {
  const bench = new Bench({
    time,
    iterations: 10,
    warmupTime: 200,
    warmupIterations: 3,
    retainSamples: true,
  });
  for (const [name, fn] of tasks) bench.add(name, fn);
  await bench.run();
  const out = {};
  for (const task of bench.tasks) {
    const result = task.result;
    if (result.state !== 'completed') throw new Error(`${task.name}: ${result.state} ${result.error ?? ''}`);
    const samples = result.latency.samples ?? [];
    const p95 =
      samples.length > 0 ? samples[Math.min(samples.length - 1, Math.floor(samples.length * 0.95))] : NaN;
    out[task.name] = {
      p50: result.latency.p50,
      p95,
      opsPerSecond: result.throughput.mean,
      samples: result.latency.samplesCount,
    };
  }
  return out;
}

function record(workload, sqlite, baseline, target, memory) {
  results.push({ workload, sqlite, baseline, target, memory });
}

const ms = (value) => (value < 0.1 ? `${(value * 1000).toFixed(1)} µs` : `${value.toFixed(3)} ms`);

try {
  // --- sessions.list over 10,000 sessions ---
  process.stdout.write(`seeding ${SESSIONS} sessions...\n`);
  const store = openSqliteStore({ file: join(dir, 'bench.db') });
  const index = {};
  await store.transaction(async (tx) => {
    for (let i = 0; i < SESSIONS; i++) {
      const session = sessionRecord(i);
      await tx.putSession(session);
      index[session.key] = session;
    }
  });
  const indexFile = join(dir, 'sessions.json');
  writeFileSync(indexFile, JSON.stringify(index));

  const listQueries = {
    'sessions.list kinds=[dm,group] limit 200': { kinds: ['dm', 'group'], limit: LIST_LIMIT },
    'sessions.list kinds=[cron] limit 200': { kinds: ['cron'], limit: LIST_LIMIT },
    'sessions.list activeMinutes=600 limit 200': { activeMinutes: 600, limit: LIST_LIMIT },
  };
  const memoryList = memoryIndex(indexFile);
  for (const [name, query] of Object.entries(listQueries)) {
    const expected = baselineList(indexFile, query).map((s) => s.key);
    const actual = (await store.listSessions({ ...query, now: NOW })).map((s) => s.key);
    if (JSON.stringify(expected) !== JSON.stringify(actual))
      throw new Error(`${name}: results differ from baseline`);
    if (JSON.stringify(memoryList(query).map((s) => s.key)) !== JSON.stringify(expected))
      throw new Error(`${name}: the in-memory index lists other sessions`);
    process.stdout.write(`measuring ${name} (${actual.length} rows)...\n`);
    const m = await measure([
      ['sqlite', () => store.listSessions({ ...query, now: NOW })],
      ['baseline', () => baselineList(indexFile, query)],
      ['memory', () => memoryList(query)],
    ]);
    record(name, m.sqlite, m.baseline, { p50: 5 }, m.memory);
  }

  // --- transcript tail reads ---
  process.stdout.write(
    `seeding a ${BIG_TRANSCRIPT}-message and a ${SMALL_TRANSCRIPT}-message transcript...\n`,
  );
  const transcripts = { big: BIG_TRANSCRIPT, small: SMALL_TRANSCRIPT };
  for (const [name, count] of Object.entries(transcripts)) {
    const key = `agent:main:transcript:${name}`;
    await store.putSession({
      key,
      sessionId: `transcript-${name}`,
      agentId: 'main',
      kind: 'other',
      createdAt: NOW,
      updatedAt: NOW,
    });
    const jsonl = join(dir, `${name}.jsonl`);
    const lines = [];
    for (let start = 0; start < count; start += 1000) {
      const batch = [];
      for (let i = start; i < Math.min(count, start + 1000); i++) batch.push(message(i));
      const stored = await store.transaction((tx) => tx.appendMessages(key, batch));
      for (const m of stored) lines.push(JSON.stringify(m));
    }
    writeFileSync(jsonl, `${lines.join('\n')}\n`);
  }
  process.stdout.write('measuring tail reads...\n');
  const tail = await measure([
    ['sqlite big', () => store.readTail('agent:main:transcript:big', TAIL)],
    ['sqlite small', () => store.readTail('agent:main:transcript:small', TAIL)],
    ['baseline big', () => baselineTail(join(dir, 'big.jsonl'), TAIL)],
    ['baseline small', () => baselineTail(join(dir, 'small.jsonl'), TAIL)],
  ]);
  record(`readTail ${TAIL} of ${BIG_TRANSCRIPT}`, tail['sqlite big'], tail['baseline big'], { p50: 2 });
  record(`readTail ${TAIL} of ${SMALL_TRANSCRIPT}`, tail['sqlite small'], tail['baseline small'], {});
  const flatness = tail['sqlite big'].p50 / tail['sqlite small'].p50;
  await store.close();

  // --- append throughput ---
  // `group`: undefined (one commit per call), 'loop' (group commit, one synchronous loop; batches fill
  // up to maxTransactions, then one final flush) or 'flush' (group commit, APPEND_SESSIONS writers at
  // once, each awaiting flush() after every append, so every message is durable before the next).
  const appendRun = async (synchronous, total, perCall = 1, group = undefined) => {
    const file = join(dir, `append-${synchronous}-${perCall}-${group ?? 'plain'}.db`);
    const s = openSqliteStore({ file, synchronous, groupCommit: group !== undefined });
    for (let i = 0; i < APPEND_SESSIONS; i++) {
      await s.putSession({
        key: `agent:main:dm:${i}`,
        sessionId: `a-${i}`,
        agentId: 'main',
        kind: 'dm',
        createdAt: NOW,
        updatedAt: NOW,
      });
    }
    const messages = Array.from({ length: total }, (_, i) => message(i));
    await s.flush();
    const cpuBefore = process.cpuUsage();
    const started = performance.now();
    if (group === 'flush') {
      await Promise.all(
        Array.from({ length: APPEND_SESSIONS }, async (_, session) => {
          for (let i = session; i < total; i += APPEND_SESSIONS) {
            await s.appendMessages(`agent:main:dm:${session}`, [messages[i]]);
            await s.flush();
          }
        }),
      );
    } else {
      for (let i = 0; i < total; i += perCall) {
        await s.appendMessages(
          `agent:main:dm:${(i / perCall) % APPEND_SESSIONS}`,
          messages.slice(i, i + perCall),
        );
      }
      await s.flush();
    }
    const seconds = (performance.now() - started) / 1000;
    const cpu = process.cpuUsage(cpuBefore);
    await s.close();
    return { wall: total / seconds, cpu: total / ((cpu.user + cpu.system) / 1e6) };
  };
  // The machine is shared: run each append workload three times and keep the median of each figure.
  const median3 = (values) => [...values].sort((a, b) => a - b)[1];
  const appendMedian = async (...args) => {
    const runs = [];
    for (let i = 0; i < 3; i++) runs.push(await appendRun(...args));
    return { wall: median3(runs.map((r) => r.wall)), cpu: median3(runs.map((r) => r.cpu)) };
  };
  process.stdout.write(
    `appending ${APPEND_MESSAGES} messages to ${APPEND_SESSIONS} sessions, one per call (3 runs each, median)...\n`,
  );
  const appendNormal = await appendMedian('NORMAL', APPEND_MESSAGES);
  const appendTurns = await appendMedian('NORMAL', APPEND_MESSAGES, 4);
  const appendFull = await appendMedian('FULL', APPEND_MESSAGES_FULL);
  process.stdout.write('the same with group commit...\n');
  const appendGroupFlush = await appendMedian('NORMAL', APPEND_MESSAGES, 1, 'flush');
  const appendGroupLoop = await appendMedian('NORMAL', APPEND_MESSAGES, 1, 'loop');
  const appendGroupFull = await appendMedian('FULL', APPEND_MESSAGES, 1, 'flush');
  const jsonlDir = join(dir, 'append-jsonl');
  mkdirSync(jsonlDir);
  const started = performance.now();
  for (let i = 0; i < APPEND_MESSAGES; i++) {
    appendFileSync(
      join(jsonlDir, `${i % APPEND_SESSIONS}.jsonl`),
      `${JSON.stringify({ ...message(i), seq: i })}\n`,
    );
  }
  const appendBaseline = APPEND_MESSAGES / ((performance.now() - started) / 1000);

  // --- report ---
  const rows = [
    [
      'workload',
      'sqlite p50',
      'sqlite p95',
      'sqlite ops/s',
      'baseline p50',
      'baseline ops/s',
      'speed-up',
      'in-memory index p50',
      'speed-up vs in-memory',
      'target',
      'ok',
    ],
  ];
  let missed = 0;
  for (const r of results) {
    const ok = r.target.p50 === undefined ? '' : r.sqlite.p50 <= r.target.p50 ? 'yes' : 'NO';
    if (ok === 'NO') missed += 1;
    rows.push([
      r.workload,
      ms(r.sqlite.p50),
      ms(r.sqlite.p95),
      Math.round(r.sqlite.opsPerSecond).toLocaleString('en'),
      ms(r.baseline.p50),
      Math.round(r.baseline.opsPerSecond).toLocaleString('en'),
      `${(r.baseline.p50 / r.sqlite.p50).toFixed(1)}x`,
      r.memory ? ms(r.memory.p50) : '',
      r.memory ? `${(r.memory.p50 / r.sqlite.p50).toFixed(2)}x` : '',
      r.target.p50 === undefined ? '' : `p50 <= ${r.target.p50} ms`,
      ok,
    ]);
  }
  const flatOk = flatness <= 2;
  if (!flatOk) missed += 1;
  rows.push([
    'readTail big/small p50 ratio',
    `${flatness.toFixed(2)}x`,
    '',
    '',
    '',
    '',
    '',
    '<= 2x',
    flatOk ? 'yes' : 'NO',
  ]);
  // The target is checked on one commit per call, as it was defined; the group commit rows below
  // (each writer awaiting flush() after every append, so each message is durable before it goes on,
  // but concurrent writers share commits) are shown next to it for comparison.
  const appendOk = appendNormal.wall >= 20_000;
  if (!appendOk) missed += 1;
  const perSecond = (value) => `${Math.round(value).toLocaleString('en')} msg/s`;
  rows.push([
    `append, ${APPEND_SESSIONS} sessions, 1 msg/call (NORMAL)`,
    '',
    '',
    perSecond(appendNormal.wall),
    '',
    perSecond(appendBaseline),
    `${(appendNormal.wall / appendBaseline).toFixed(1)}x`,
    '>= 20,000 msg/s',
    appendOk ? 'yes' : 'NO',
  ]);
  rows.push([
    '  same, per CPU-second of this process',
    '',
    '',
    perSecond(appendNormal.cpu),
    '',
    '',
    '',
    '(info: wall figure minus CPU contention)',
    '',
  ]);
  rows.push([
    `append, ${APPEND_SESSIONS} sessions, 4 msg/call (a turn, NORMAL)`,
    '',
    '',
    perSecond(appendTurns.wall),
    '',
    '',
    '',
    '(info)',
    '',
  ]);
  rows.push([
    `append, ${APPEND_SESSIONS} sessions, 1 msg/call (FULL)`,
    '',
    '',
    perSecond(appendFull.wall),
    '',
    '',
    '',
    '(info: one fsync per commit)',
    '',
  ]);
  rows.push([
    `append, ${APPEND_SESSIONS} writers, 1 msg + await flush() each (NORMAL, group commit)`,
    '',
    '',
    perSecond(appendGroupFlush.wall),
    '',
    '',
    '',
    '(info: durable per message, commits shared)',
    '',
  ]);
  rows.push([
    '  same, per CPU-second of this process',
    '',
    '',
    perSecond(appendGroupFlush.cpu),
    '',
    '',
    '',
    '(info)',
    '',
  ]);
  rows.push([
    `append, ${APPEND_SESSIONS} sessions, 1 msg/call, one loop, one final flush (group commit)`,
    '',
    '',
    perSecond(appendGroupLoop.wall),
    '',
    '',
    '',
    `(info: batches of maxTransactions; ${perSecond(appendGroupLoop.cpu)} per CPU-s)`,
    '',
  ]);
  rows.push([
    `append, ${APPEND_SESSIONS} writers, 1 msg + await flush() each (FULL, group commit)`,
    '',
    '',
    perSecond(appendGroupFull.wall),
    '',
    '',
    '',
    '(info: one fsync per batch)',
    '',
  ]);
  // Rows without an in-memory figure get empty cells before their target and ok columns.
  for (const row of rows) while (row.length < rows[0].length) row.splice(row.length - 2, 0, '');
  const widths = rows[0].map((_, c) => Math.max(...rows.map((row) => row[c].length)));
  process.stdout.write('\n@colloquy/store-sqlite vs JSON index + JSONL transcripts\n');
  for (const [i, row] of rows.entries()) {
    process.stdout.write(`${row.map((cell, c) => cell.padEnd(widths[c])).join('  ')}\n`);
    if (i === 0) process.stdout.write(`${widths.map((w) => '-'.repeat(w)).join('  ')}\n`);
  }
  const [load1] = loadavg();
  process.stdout.write(
    `\nnode ${process.version}, ${cpus().length} CPUs, load average ${load1.toFixed(1)} during the run\n`,
  );
  process.stdout.write(`${missed === 0 ? 'all targets met' : `${missed} target(s) missed`}\n`);
  if (missed > 0 && process.argv.includes('--strict')) process.exitCode = 1;
} finally {
  rmSync(dir, { recursive: true, force: true });
}
