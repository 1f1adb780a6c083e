// Loaded into the app under soak with `node --expose-gc --import <this file>`. Every
// SOAK_PROBE_MS it runs a full garbage collection (so the figure is the heap the app keeps, not
// garbage waiting to be collected) and appends one JSON line with the heap, RSS, live handles,
// the event loop's delay (p99 and max since the last line) and the CPU the app used (in % of one
// core) to SOAK_PROBE_FILE: figures /proc cannot give from outside. A long delay while the app
// uses little CPU says the machine, not the app, is the bottleneck.
import { appendFileSync } from 'node:fs';
import { monitorEventLoopDelay } from 'node:perf_hooks';

const file = process.env.SOAK_PROBE_FILE;
if (file) {
  const every = Number(process.env.SOAK_PROBE_MS ?? 10_000);
  const delay = monitorEventLoopDelay({ resolution: 10 });
  delay.enable();
  let cpu = process.cpuUsage();
  let cpuAt = performance.now();
  setInterval(() => {
    const used = process.cpuUsage(cpu);
    const now = performance.now();
    const cpuPercent = ((used.user + used.system) / 1000 / (now - cpuAt)) * 100;
    cpu = process.cpuUsage();
    cpuAt = now;
    const loopDelay = { p99Ms: delay.percentile(99) / 1e6, maxMs: delay.max / 1e6 };
    delay.reset();
    globalThis.gc?.();
    const memory = process.memoryUsage();
    const sample = {
      at: Date.now(),
      heapUsed: memory.heapUsed,
      heapTotal: memory.heapTotal,
      external: memory.external,
      rss: memory.rss,
      handles: process.getActiveResourcesInfo().length,
      loopDelayP99Ms: loopDelay.p99Ms,
      loopDelayMaxMs: loopDelay.maxMs,
      cpuPercent,
    };
    appendFileSync(file, `${JSON.stringify(sample)}\n`);
  }, every).unref();
}
