// The background checkpointer's worker thread (started by `BackgroundCheckpointer`): its own
// connection to the store file runs `PRAGMA wal_checkpoint(PASSIVE)` every `intervalMs`, so the
// copy of the write-ahead log into the database file, and its fsync, happen beside the main thread.

import { parentPort, workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';
import type { CheckpointWorkerData, WorkerMessage } from './checkpoint-messages.js';
import { pendingWalFrames } from './wal-index.js';

const { file, intervalMs, minFrames } = workerData as CheckpointWorkerData;
const port = parentPort;
if (port === null) throw new Error('checkpoint-worker.js runs only as a worker thread');

const post = (message: WorkerMessage) => port.postMessage(message);
// This connection only ever checkpoints PASSIVE, which takes no lock it would wait for.
const db = new Database(file, { fileMustExist: true, timeout: 0 });

type CheckpointRow = { busy: number; log: number; checkpointed: number };

/**
 * Copies the log frames committed so far into the database file, unless fewer than `minFrames` wait
 * (or none). PASSIVE never blocks the main connection, which keeps committing meanwhile; the main
 * thread learns how large the log was from the report, and lets it start over (see
 * `BackgroundCheckpointer`).
 */
function tick(): void {
  const pending = pendingWalFrames(file);
  if (pending !== undefined && (pending === 0 || pending < minFrames)) return;
  try {
    const [row] = db.pragma('wal_checkpoint(PASSIVE)') as CheckpointRow[];
    post({
      kind: 'checkpoint',
      busy: row?.busy === 1,
      walFrames: row?.log ?? 0,
      checkpointedFrames: row?.checkpointed ?? 0,
    });
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
