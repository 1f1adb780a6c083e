import WebSocket from 'ws';
import { type BenchApp, startBenchApp } from './app-child.js';
import { modelEnv, repliedIds, startEchoModel } from './model-fake.js';
import { cpuMs, memoryMb } from './proc-stats.js';
import { ReplyTracker, type RunFigures } from './reply-tracker.js';
import type { AppOverrides, ShapeResult } from './telegram-load.js';

/** A steady web chat load: `visitors` sockets sending `perSecond` messages in all for `seconds`. */
export interface WebChatShape {
  visitors: number;
  perSecond: number;
  seconds: number;
  modelLatencyMs: number;
}

/** Limits opened up so one address may act as many visitors (the defaults guard a public page). */
export const OPEN_LIMITS = {
  rateLimit: { burst: 10_000, perSecond: 10_000 },
  addressRateLimit: { burst: 10_000, perSecond: 10_000 },
  maxSocketsPerAddress: 1000,
  newVisitorsPerMinute: 10_000,
};

/**
 * Runs the web chat shape `runs` times against one app process: visitors on real WebSockets, the
 * OpenAI-compatible fake as the model; latency is from the frame sent to the assistant's final message.
 */
export async function runWebChatShape(
  shape: WebChatShape,
  runs: number,
  overrides: AppOverrides = {},
): Promise<ShapeResult> {
  const model = await startEchoModel(shape.modelLatencyMs);
  let app: BenchApp | undefined;
  const sockets: WebSocket[] = [];
  try {
    app = await startBenchApp({
      config: { ...overrides.config, channels: { webchat: OPEN_LIMITS } },
      env: { ...modelEnv(model), ...overrides.env },
      ...(overrides.cpuProfileDir ? { cpuProfileDir: overrides.cpuProfileDir } : {}),
    });
    let tracker = new ReplyTracker();
    for (let i = 0; i < shape.visitors; i++) {
      sockets.push(await openVisitor(app.webchatUrl, (id) => tracker.seen(id)));
    }
    const warm = new ReplyTracker();
    tracker = warm;
    await steady(sockets, warm, { ...shape, perSecond: 40, seconds: 1 }, 'warm');
    await warm.waitAll(15_000 + shape.modelLatencyMs);
    const results: RunFigures[] = [];
    for (let run = 0; run < runs; run++) {
      const current = new ReplyTracker();
      tracker = current;
      const cpuBefore = cpuMs(app.pid);
      await steady(sockets, current, shape, `r${run}`);
      await current.waitAll(30_000 + shape.modelLatencyMs);
      const cpu = cpuMs(app.pid) - cpuBefore;
      await new Promise((resolve) => setTimeout(resolve, 300));
      results.push(current.figures(cpu));
    }
    return { runs: results, peakRssMb: memoryMb(app.pid).peak };
  } finally {
    for (const socket of sockets) socket.terminate();
    await app?.stop();
    await model.close();
  }
}

/** Sends `perSecond` messages a second, round robin over the sockets, for `seconds`. */
async function steady(
  sockets: readonly WebSocket[],
  tracker: ReplyTracker,
  shape: { perSecond: number; seconds: number },
  tag: string,
): Promise<void> {
  const total = Math.round(shape.perSecond * shape.seconds);
  const started = performance.now();
  let n = 0;
  while (n < total) {
    const due = Math.min(total, Math.floor(((performance.now() - started) / 1000) * shape.perSecond) + 1);
    for (; n < due; n++) {
      const id = `msg-${tag}-${n}`;
      tracker.sent(id);
      sockets[n % sockets.length]!.send(JSON.stringify({ type: 'message', text: `hello ${id}` }));
    }
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** Opens one visitor's socket and waits for its `ready` frame. */
export async function openVisitor(base: string, onReply: (id: string) => void): Promise<WebSocket> {
  const origin = base.replace(/\/$/, '');
  const socket = new WebSocket(`${origin.replace('http', 'ws')}/ws`, { headers: { origin } });
  const ready = new Promise<void>((resolve, reject) => {
    socket.once('unexpected-response', (_req, res) => reject(new Error(`HTTP ${res.statusCode}`)));
    socket.once('error', reject);
    socket.on('message', (data) => {
      const frame = JSON.parse(String(data)) as { type: string; message?: { role: string; text: string } };
      if (frame.type === 'ready') resolve();
      if (frame.type === 'message' && frame.message?.role === 'assistant') {
        for (const id of repliedIds(frame.message.text)) onReply(id);
      }
    });
  });
  await ready;
  return socket;
}
