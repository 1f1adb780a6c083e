import { FakeTelegram } from '@colloquy/testkit/telegram-fake';
import { type BenchApp, startBenchApp } from './app-child.js';
import { modelEnv, repliedIds, startEchoModel } from './model-fake.js';
import { cpuMs, memoryMb } from './proc-stats.js';
import { ReplyTracker, type RunFigures } from './reply-tracker.js';

const TOKEN = '5005:bench-token';

/** One Telegram load shape: `users` distinct users each send `perUser` DMs at once. */
export interface TelegramShape {
  users: number;
  perUser: number;
  modelLatencyMs: number;
}

/** What a shape measured over its runs. */
export interface ShapeResult {
  runs: RunFigures[];
  /** Peak RSS of the app over all runs (VmHWM), MB. */
  peakRssMb: number;
  /** The warm-up before the runs: how many turns, and the app's CPU per turn over them. */
  warmUp?: { turns: number; cpuMsPerTurn: number };
}

/**
 * Turns a fresh app process serves before a shape's runs are measured (`BENCH_WARMUP_TURNS` sets
 * it). A bot serves for days, so the figures are those of a process whose JIT has compiled the
 * turn's path. Measured on this machine: the first 200 turns cost about 2.2 ms of CPU each, turns
 * 1,000 to 1,600 about 1.5 ms, and from about 1,600 turns on it settles at 0.9-1.3 ms.
 */
const WARMUP_TURNS = Number(process.env.BENCH_WARMUP_TURNS ?? 2000);
/** The warm-up comes in bursts of this many first-contact DMs (the 200 x 1 shape). */
const WARMUP_BURST = 200;

/** Extra config for the app (e.g. `storage.url`) and environment. */
export interface AppOverrides {
  config?: Record<string, unknown>;
  env?: Record<string, string>;
  cpuProfileDir?: string;
}

/**
 * Runs a Telegram shape `runs` times against one app process (grammY polling the Bot API fake, the
 * OpenAI-compatible fake as the model): every run uses fresh user ids, so each is a first contact.
 */
export async function runTelegramShape(
  shape: TelegramShape,
  runs: number,
  overrides: AppOverrides = {},
): Promise<ShapeResult> {
  const model = await startEchoModel(shape.modelLatencyMs);
  const fake = await FakeTelegram.start();
  fake.addBot(TOKEN, { id: 5005, username: 'colloquy_bench_bot' });
  let app: BenchApp | undefined;
  let tracker: ReplyTracker | undefined;
  let scanned = 0;
  let watching = true;
  // One listener for the whole shape: it reads the bot's new messages after every API call.
  void fake
    .waitFor(
      () => {
        for (; scanned < fake.sent.length; scanned++) {
          for (const id of repliedIds(fake.sent[scanned]!.visibleText)) tracker?.seen(id);
        }
        return !watching;
      },
      2_000_000_000,
      'the end of the bench',
    )
    .catch(() => undefined);
  try {
    app = await startBenchApp({
      config: {
        ...overrides.config,
        channels: { telegram: { accounts: [{ token: TOKEN, apiRoot: fake.apiRoot }], dmPolicy: 'open' } },
      },
      env: { ...modelEnv(model), ...overrides.env },
      ...(overrides.cpuProfileDir ? { cpuProfileDir: overrides.cpuProfileDir } : {}),
    });
    await fake.waitFor(() => fake.hasPendingPoll(TOKEN), 15_000, 'the first long poll');
    const warmUpCpuBefore = cpuMs(app.pid);
    let warmedTurns = 0;
    for (let burst = 0; warmedTurns < WARMUP_TURNS; burst++) {
      const users = Math.min(WARMUP_BURST, WARMUP_TURNS - warmedTurns);
      await sendBurst(fake, { users, perUser: 1 }, `warm${burst}`, (t) => {
        tracker = t;
      }).waitAll(15_000 + shape.modelLatencyMs);
      warmedTurns += users;
    }
    const warmUp =
      warmedTurns > 0
        ? { turns: warmedTurns, cpuMsPerTurn: (cpuMs(app.pid) - warmUpCpuBefore) / warmedTurns }
        : undefined;
    const results: RunFigures[] = [];
    for (let run = 0; run < runs; run++) {
      const cpuBefore = cpuMs(app.pid);
      const current = sendBurst(fake, shape, `r${run}`, (t) => {
        tracker = t;
      });
      await current.waitAll(30_000 + shape.modelLatencyMs * shape.perUser);
      const cpu = cpuMs(app.pid) - cpuBefore;
      // A duplicate would come soon after the first copy: give it a moment before counting.
      await new Promise((resolve) => setTimeout(resolve, 300));
      results.push(current.figures(cpu));
    }
    return { runs: results, peakRssMb: memoryMb(app.pid).peak, ...(warmUp ? { warmUp } : {}) };
  } finally {
    watching = false;
    await app?.stop();
    await fake.close();
    await model.close();
  }
}

let nextUserId = 100_000;

/** Pushes every message of a shape at once; returns the tracker that waits for the replies. */
function sendBurst(
  fake: FakeTelegram,
  shape: { users: number; perUser: number },
  tag: string,
  install: (tracker: ReplyTracker) => void,
): ReplyTracker {
  const tracker = new ReplyTracker();
  install(tracker);
  const users = Array.from({ length: shape.users }, () => nextUserId++);
  for (let n = 0; n < shape.perUser; n++) {
    for (const userId of users) {
      const id = `msg-${tag}-u${userId}-${n}`;
      tracker.sent(id);
      fake.pushMessage(TOKEN, {
        chat: { id: userId, type: 'private', first_name: `User ${userId}` },
        from: { id: userId, is_bot: false, first_name: `User ${userId}` },
        text: `hello ${id}`,
      });
    }
  }
  return tracker;
}
