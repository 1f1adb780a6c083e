// The background checkpointer's worker thread (started by `BackgroundCheckpointer`): its own
// connection to the store file runs `PRAGMA wal_checkpoint(PASSIVE)` every `intervalMs`, so the
// copy of the write-ahead log into the database file and its fsync never block the main thread.

import { parentPort, workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';
import type { CheckpointWorkerData, WorkerMessage } from './checkpoint-messages.js';
import { pendingWalFrames } from './wal-index.js';

const { file, intervalMs, minFrames } = workerData as CheckpointWorkerData;
const port = parentPort;
if (port === null) throw new Error('checkpoint-worker.js runs only as a worker thread');

const post = (message: WorkerMessage) => port.postMessage(message);
// A short busy timeout: PASSIVE never waits; RESTART waits this long for the main connection's
// write lock (between its commits), and at most this long again for a reader while it holds that
// lock, so the main connection never waits longer. It tries again at the next tick.
const RESTART_WAIT_MS = 20;
const db = new Database(file, { fileMustExist: true, timeout: RESTART_WAIT_MS });

type CheckpointRow = { busy: number; log: number; checkpointed: number };

/** Runs one checkpoint pragma and reports its result. */
function checkpoint(mode: 'PASSIVE' | 'RESTART'): void {
  const [row] = db.pragma(`wal_checkpoint(${mode})`) as CheckpointRow[];
  post({
    kind: 'checkpoint',
    mode,
    busy: row?.busy === 1,
    walFrames: row?.log ?? 0,
    checkpointedFrames: row?.checkpointed ?? 0,
  });
}

/**
 * A PASSIVE checkpoint copies the log without blocking the writer, unless nothing or fewer than
 * `minFrames` frames wait. The next writer starts the log over only if it begins after the whole log was
 * copied, which under steady writes a PASSIVE checkpoint never sees (commits land while it
 * copies). So a RESTART checkpoint follows: it takes the write lock (or gives up after
 * `RESTART_WAIT_MS`), copies the few frames committed meanwhile, and releases it with
 * the log fully copied, so the next commit starts it over and the `-wal` file stays bounded.
 */
function tick(): void {
  const pending = pendingWalFrames(file);
  if (pending !== undefined && (pending === 0 || pending < minFrames)) return;
  try {
    checkpoint('PASSIVE');
    checkpoint('RESTART');
  } catch (error) {
    post({ kind: 'error', message: error instanceof Error ? error.message : String(error) });
  }
}

const timer = setInterval(tick, intervalMs);
port.on('message', (message: WorkerMessage) => {
  if (message.kind !== 'stop') return;
  clearInterval(timer);
  db.close();
  port.close();
});
post({ kind: 'ready' });
