// Loaded into the app under soak with `node --expose-gc --import <this file>`. Every
// SOAK_PROBE_MS it runs a full garbage collection (so the figure is the heap the app keeps, not
// garbage waiting to be collected) and appends one JSON line with the heap, RSS and live handles
// to SOAK_PROBE_FILE: figures /proc cannot give from outside.
import { appendFileSync } from 'node:fs';

const file = process.env.SOAK_PROBE_FILE;
if (file) {
  const every = Number(process.env.SOAK_PROBE_MS ?? 10_000);
  setInterval(() => {
    globalThis.gc?.();
    const memory = process.memoryUsage();
    const sample = {
      at: Date.now(),
      heapUsed: memory.heapUsed,
      heapTotal: memory.heapTotal,
      external: memory.external,
      rss: memory.rss,
      handles: process.getActiveResourcesInfo().length,
    };
    appendFileSync(file, `${JSON.stringify(sample)}\n`);
  }, every).unref();
}
