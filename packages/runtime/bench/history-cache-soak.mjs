// Soak test of the prompt-history cache's byte cap: many sessions with large messages go through
// `createHistoryCache` (the one the agent loop uses) for a bounded time, and the heap and RSS are
// printed at the start, the middle and the end. The store is synthetic (it makes each message when
// read and keeps nothing), so what grows is the cache. Goal: memory flat within 20 % from middle to end.
//
//   node bench/history-cache-soak.mjs          about 60 s (after `pnpm build`)
//   SOAK_MINUTES=10 node bench/history-cache-soak.mjs
//   SOAK_CACHE_MIB=64 SOAK_SESSIONS=5000 ...    the cap and the number of sessions
//
// Not part of `pnpm test` or `pnpm bench`: run it with `pnpm --filter @colloquy/runtime bench:soak`.
import { setTimeout as sleep } from 'node:timers/promises';
import { createHistoryCache } from '../dist/agent/history-cache.js';

const MINUTES = Number(process.env.SOAK_MINUTES ?? 1);
const CACHE_MIB = Number(process.env.SOAK_CACHE_MIB ?? 64);
const SESSIONS = Number(process.env.SOAK_SESSIONS ?? 5000);
/** Per-turn prompt budget in tokens (chars / 4): about 120,000 characters of history per session. */
const BUDGET_TOKENS = 30_000;
const DURATION_MS = MINUTES * 60_000;

/** seq -> message length: 2 to 32 KB of text, the same every time a seq is read. */
const lengthOf = (seq) => 2_000 + ((seq * 7919) % 30_000);
/** 1,000-character two-byte pieces (U+0101 and up, not Latin-1), made once. */
const PIECES = Array.from({ length: 32 }, (_, i) => String.fromCharCode(0x101 + i).repeat(1000));
/**
 * A fresh, flat two-byte string each read, as a store would decode it from disk: `join` copies into
 * a new string, where `padEnd` or `+` would build ropes that share memory and flatter the figures.
 */
function text(key, seq) {
  const parts = [`${key} #${seq} `];
  for (let i = 0; i < lengthOf(seq) / 1000; i++) parts.push(PIECES[(seq + i) % PIECES.length]);
  return parts.join('');
}
const makeMessage = (key, seq) => ({
  role: seq % 2 === 0 ? 'user' : 'assistant',
  content: text(key, seq),
  timestamp: seq,
  seq,
});

/** Transcript lengths only; messages are made on demand. */
const lengths = new Map();
const store = {
  async readTail(key, limit, options) {
    const end = Math.min(lengths.get(key) ?? 0, options?.beforeSeq ?? Number.POSITIVE_INFINITY);
    const out = [];
    for (let seq = Math.max(0, end - limit); seq < end; seq++) out.push(makeMessage(key, seq));
    return out;
  },
};

const cache = createHistoryCache({ maxBytes: CACHE_MIB * 1024 * 1024 });
const mib = (bytes) => `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
const samples = [];
function sample(label, turns) {
  globalThis.gc?.();
  const { heapUsed, rss } = process.memoryUsage();
  samples.push({ label, heapUsed, rss });
  console.log(
    `${label.padEnd(6)} turns ${String(turns).padStart(9)}  sessions held ${String(cache.size()).padStart(5)}  ` +
      `cache ${mib(cache.bytes()).padStart(10)}  heapUsed ${mib(heapUsed).padStart(10)}  rss ${mib(rss).padStart(10)}`,
  );
}

console.log(
  `history cache soak: ${MINUTES} min, ${SESSIONS} sessions, cap ${CACHE_MIB} MiB, messages 2-32 KB` +
    (globalThis.gc ? ', gc() before each sample' : ' (run with --expose-gc for steadier figures)'),
);
let turns = 0;
let random = 42;
const nextSession = () => {
  random = (random * 1103515245 + 12345) % 2 ** 31;
  return random % SESSIONS;
};
sample('start', turns);
const started = Date.now();
let middleDone = false;
while (Date.now() - started < DURATION_MS) {
  for (let i = 0; i < 200; i++) {
    const key = `agent:main:soak:group:g${nextSession()}`;
    lengths.set(key, (lengths.get(key) ?? 0) + 2);
    const window = await cache.load(store, key, `sid-${key}`, BUDGET_TOKENS);
    if (window.length === 0) throw new Error(`empty window for ${key}`);
    if (cache.bytes() > CACHE_MIB * 1024 * 1024) throw new Error(`cache over its cap: ${cache.bytes()}`);
    turns++;
  }
  if (!middleDone && Date.now() - started >= DURATION_MS / 2) {
    middleDone = true;
    sample('middle', turns);
  }
  await sleep(0);
}
sample('end', turns);
const [, middle, end] = samples;
const growth = (a, b) => `${(((b - a) / a) * 100).toFixed(1)} %`;
console.log(
  `middle -> end: heapUsed ${growth(middle.heapUsed, end.heapUsed)}, rss ${growth(middle.rss, end.rss)}; ` +
    `${Math.round(turns / (DURATION_MS / 1000))} loads/s`,
);
