// End-to-end bench of the reference app (issue 22): `colloquy start` as a child process with a config
// file and a SQLite store in a temp dir, against the local Telegram Bot API fake, the Discord fake,
// real WebSockets for the web chat, the OpenAI-compatible fake as the model, and (idle RSS only) a silent
// loopback WebSocket standing in for WhatsApp Web (`bench/e2e/whatsapp-fake.ts`). Every figure is the
// median of BENCH_RUNS runs (default 5) with min-max; `--quick` (or BENCH_QUICK=1) runs once.
// `--profile` runs each shape with `node --cpu-prof` on the app and prints its top self time
// (BENCH_PROFILE_DIR keeps the .cpuprofile files there, BENCH_PROFILE_TOP sets the rows).
// `--only tg-200x1-0ms,webchat` picks shapes. `--postgres` runs the Telegram shapes on PostgreSQL (a
// throwaway local cluster, a fresh database per shape); COLLOQUY_DATABASE_URL names a database instead.
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestPostgres, type TestPostgres } from '@colloquy/testkit/postgres';
import { measureIdleRss } from './e2e/idle-rss.js';
import { printProfileSummary, summariseProfile } from './e2e/profile-summary.js';
import type { RunFigures } from './e2e/reply-tracker.js';
import { type Spread, spread } from './e2e/stats.js';
import { type AppOverrides, runTelegramShape, type ShapeResult } from './e2e/telegram-load.js';
import { runWebChatShape } from './e2e/webchat-load.js';

const args = process.argv.slice(2);
const quick = args.includes('--quick') || process.env.BENCH_QUICK === '1';
const profile = args.includes('--profile');
const runs = quick ? 1 : Number(process.env.BENCH_RUNS ?? 5);
const only = args.includes('--only') ? (args[args.indexOf('--only') + 1] ?? '').split(',') : undefined;
const databaseUrl = process.env.COLLOQUY_DATABASE_URL;
const postgres = args.includes('--postgres');

interface Shape {
  name: string;
  title: string;
  run(runs: number, overrides: AppOverrides): Promise<ShapeResult>;
}

const SHAPES: Shape[] = [
  {
    name: 'tg-200x1-0ms',
    title: 'Telegram 200 users x 1 DM, model 0 ms',
    run: (n, o) => runTelegramShape({ users: 200, perUser: 1, modelLatencyMs: 0 }, n, o),
  },
  {
    name: 'tg-200x1-1000ms',
    title: 'Telegram 200 users x 1 DM, model 1000 ms',
    run: (n, o) => runTelegramShape({ users: 200, perUser: 1, modelLatencyMs: 1000 }, n, o),
  },
  {
    name: 'tg-20x10-0ms',
    title: 'Telegram 20 users x 10 DMs burst, model 0 ms',
    run: (n, o) => runTelegramShape({ users: 20, perUser: 10, modelLatencyMs: 0 }, n, o),
  },
  {
    name: 'webchat',
    title: 'Web chat 60 visitors, 400 msg/s for 5 s, model 0 ms',
    run: (n, o) =>
      runWebChatShape({ visitors: 60, perSecond: 400, seconds: 5, modelLatencyMs: 0 }, n, {
        ...o,
        env: {},
        config: {},
      }),
  },
];

const fmt = (s: Spread, digits = 0) =>
  runs === 1
    ? s.median.toFixed(digits)
    : `${s.median.toFixed(digits)} (${s.min.toFixed(digits)}-${s.max.toFixed(digits)})`;
const column = (results: RunFigures[], pick: (r: RunFigures) => number) => spread(results.map(pick));

async function main(): Promise<void> {
  const selected = SHAPES.filter(
    (s) => (!only || only.includes(s.name)) && (!postgres || s.name.startsWith('tg-')),
  );
  const server: TestPostgres | undefined = postgres ? await startTestPostgres() : undefined;
  const database = async (): Promise<AppOverrides> => {
    const url = server ? await server.createDatabase() : databaseUrl;
    return url ? { env: { COLLOQUY_DATABASE_URL: url } } : {};
  };
  console.log(
    `colloquy end-to-end bench: ${runs} run(s) per shape, median (min-max); store ${postgres || databaseUrl ? 'PostgreSQL' : 'SQLite'}; ` +
      `load average ${loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')}`,
  );
  const rows: string[][] = [
    [
      'shape',
      'replies/s',
      'p50 ms',
      'p99 ms',
      'max ms',
      'drain ms',
      'lost',
      'dup',
      'CPU ms/turn',
      'peak RSS MB',
    ],
  ];
  const results = new Map<string, ShapeResult>();
  for (const shape of selected) {
    const keep = process.env.BENCH_PROFILE_DIR;
    const profileDir = profile ? mkdtempSync(join(keep ?? tmpdir(), 'colloquy-prof-')) : undefined;
    const overrides = await database();
    const result = await shape.run(runs, {
      ...overrides,
      ...(profileDir ? { cpuProfileDir: profileDir } : {}),
    });
    results.set(shape.name, result);
    const r = result.runs;
    rows.push([
      shape.title,
      fmt(column(r, (x) => x.repliesPerSecond)),
      fmt(column(r, (x) => x.p50Ms)),
      fmt(column(r, (x) => x.p99Ms)),
      fmt(column(r, (x) => x.maxMs)),
      fmt(column(r, (x) => x.drainMs)),
      String(r.reduce((n, x) => n + x.lost, 0)),
      String(r.reduce((n, x) => n + x.duplicated, 0)),
      fmt(
        column(r, (x) => x.cpuMsPerTurn),
        2,
      ),
      result.peakRssMb.toFixed(0),
    ]);
    if (profileDir) {
      const file = readdirSync(profileDir).find((f) => f.endsWith('.cpuprofile'));
      if (file)
        printProfileSummary(
          `profile of the app, ${shape.title}`,
          summariseProfile(join(profileDir, file), Number(process.env.BENCH_PROFILE_TOP ?? 15)),
        );
      if (keep) console.log(`  profile kept in ${profileDir}`);
      else rmSync(profileDir, { recursive: true, force: true });
    }
  }
  console.log();
  printTable(rows);
  for (const shape of selected) {
    const warmUp = results.get(shape.name)?.warmUp;
    if (!warmUp) continue;
    console.log(
      `  before "${shape.title}": a warm-up of ${warmUp.turns} first-contact DMs at ${warmUp.cpuMsPerTurn.toFixed(2)} CPU ms/turn (the JIT compiling the turn's path)`,
    );
  }
  await server?.stop();
  let idle: Spread | undefined;
  if ((!only || only.includes('idle')) && !postgres) {
    const samples: { earlyMb: number; settledMb: number }[] = [];
    for (let i = 0; i < runs; i++) samples.push(await measureIdleRss());
    idle = spread(samples.map((s) => s.settledMb));
    const early = spread(samples.map((s) => s.earlyMb));
    console.log(
      '\nidle RSS, web chat + Telegram + Discord against fakes + WhatsApp (Baileys) at a silent loopback WebSocket that accepts and never answers the handshake, model configured:',
    );
    console.log(`  3 s after every channel connected: ${fmt(early, 1)} MB`);
    console.log(`  30 s after (idle, the target's figure): ${fmt(idle, 1)} MB`);
  }
  printTargets(results, idle);
}

function printTable(rows: string[][]): void {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((row) => row[i]!.length)));
  for (const row of rows)
    console.log(
      row.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join('  '),
    );
}

function printTargets(results: Map<string, ShapeResult>, idle: Spread | undefined): void {
  const med = (name: string, pick: (r: RunFigures) => number) => {
    const r = results.get(name);
    return r ? spread(r.runs.map(pick)).median : undefined;
  };
  const total = (name: string, pick: (r: RunFigures) => number) =>
    results.get(name)?.runs.reduce((n, r) => n + pick(r), 0);
  const checks: [string, number | undefined, (v: number) => boolean, string][] = [
    ['200x1 0 ms replies/s', med('tg-200x1-0ms', (r) => r.repliesPerSecond), (v) => v >= 500, '>= 500'],
    ['200x1 0 ms p99', med('tg-200x1-0ms', (r) => r.p99Ms), (v) => v <= 1000, '<= 1000 ms'],
    [
      '200x1 1000 ms drain after the last message',
      med('tg-200x1-1000ms', (r) => r.drainMs),
      (v) => v <= 3000,
      '<= 3000 ms',
    ],
    ['20x10 burst p99', med('tg-20x10-0ms', (r) => r.p99Ms), (v) => v <= 300, '<= 300 ms'],
    // Replies/s counts up to the last reply, so a chat that keeps up with 400 msg/s for 5 s shows
    // 2000 / (5 s + drain): the check is that the replies do not fall behind the sending.
    [
      'web chat drain after 5 s at 400 msg/s',
      med('webchat', (r) => r.drainMs),
      (v) => v <= 1000,
      '<= 1000 ms',
    ],
    ['web chat p99', med('webchat', (r) => r.p99Ms), (v) => v <= 500, '<= 500 ms'],
    ['Telegram CPU per turn', med('tg-200x1-0ms', (r) => r.cpuMsPerTurn), (v) => v <= 1.5, '<= 1.5 ms'],
    ['idle RSS, all channels', idle?.median, (v) => v <= 150, '<= 150 MB'],
  ];
  let lost = 0;
  let duplicated = 0;
  for (const name of results.keys()) {
    lost += total(name, (r) => r.lost) ?? 0;
    duplicated += total(name, (r) => r.duplicated) ?? 0;
  }
  console.log('\ntargets:');
  for (const [what, value, ok, target] of checks) {
    if (value === undefined) continue;
    console.log(
      `  ${what.padEnd(44)} ${value.toFixed(2).padStart(9)}  ${target.padEnd(16)} ${ok(value) ? 'ok' : 'MISSED'}`,
    );
  }
  console.log(
    `  ${'lost / duplicated replies'.padEnd(44)} ${`${lost} / ${duplicated}`.padStart(9)}  ${'0 / 0'.padEnd(16)} ${lost === 0 && duplicated === 0 ? 'ok' : 'MISSED'}`,
  );
}

await main();
// The fakes' listeners hold long timers; the bench is done.
process.exit(0);
