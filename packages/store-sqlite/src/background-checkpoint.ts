import { Worker } from 'node:worker_threads';
import { ColloquyError, type Logger } from '@colloquy/core';
import type { CheckpointWorkerData, WorkerMessage } from './checkpoint-messages.js';

/** Settings of `SqliteStoreOptions.backgroundCheckpoint`; every field is optional. */
export interface BackgroundCheckpointOptions {
  /** Milliseconds between checkpoint attempts (default 20). */
  intervalMs?: number;
  /** Skip an attempt while fewer log frames (pages) than this wait to be copied (default 200). */
  minFrames?: number;
}

/** {@link BackgroundCheckpointOptions} with the defaults applied. */
export interface BackgroundCheckpointSettings {
  /** Milliseconds between checkpoint attempts. */
  intervalMs: number;
  /** Fewer frames than this waiting to be copied: skip the attempt. */
  minFrames: number;
}

// A busy runtime writes about 15 log pages a turn: at 1,000 turns a second, the worker copies about 300
// pages each time and the commit that reaches `wal_autocheckpoint` (1000 by default) finds all but the
// last few copied. An idle store costs a read of the wal-index header every 20 ms.
const DEFAULT_INTERVAL_MS = 20;
const DEFAULT_MIN_FRAMES = 200;

/**
 * Applies the defaults to `SqliteStoreOptions.backgroundCheckpoint`; `undefined` when it is off.
 *
 * @throws `INVALID_ARGUMENT` when a setting is not a positive whole number (`minFrames` may be 0)
 */
export function resolveBackgroundCheckpoint(
  option: boolean | BackgroundCheckpointOptions | undefined,
): BackgroundCheckpointSettings | undefined {
  if (option === undefined || option === false) return undefined;
  const given = option === true ? {} : option;
  const intervalMs = given.intervalMs ?? DEFAULT_INTERVAL_MS;
  const minFrames = given.minFrames ?? DEFAULT_MIN_FRAMES;
  if (!Number.isInteger(intervalMs) || intervalMs < 1) {
    throw new ColloquyError(
      'INVALID_ARGUMENT',
      `\`backgroundCheckpoint.intervalMs\` must be a whole number of milliseconds >= 1, got ${String(intervalMs)}.`,
      { intervalMs },
    );
  }
  if (!Number.isInteger(minFrames) || minFrames < 0) {
    throw new ColloquyError(
      'INVALID_ARGUMENT',
      `\`backgroundCheckpoint.minFrames\` must be a whole number of frames >= 0, got ${String(minFrames)}.`,
      { minFrames },
    );
  }
  return { intervalMs, minFrames };
}

/** What {@link BackgroundCheckpointer} needs. */
export interface BackgroundCheckpointerInit {
  /** The absolute path of the store file (never `:memory:`). */
  file: string;
  settings: BackgroundCheckpointSettings;
  /**
   * The log size, in frames, from which the main connection finishes the worker's copy (see
   * {@link BackgroundCheckpointer.whenLogFull}); 0 never.
   */
  startLogOverAt: number;
  logger: Logger;
  /** Called once when the worker dies: the main connection must checkpoint in its commits again. */
  onWorkerLost: () => void;
}

/**
 * Where the worker script is: beside this module in `dist`. The package's own tests run this
 * module from `src` (TypeScript), where the worker is the built one.
 */
function workerUrl(): URL {
  return import.meta.url.endsWith('.ts')
    ? new URL('../dist/checkpoint-worker.js', import.meta.url)
    : new URL('./checkpoint-worker.js', import.meta.url);
}

/**
 * Runs `PRAGMA wal_checkpoint(PASSIVE)` on a worker thread with its own connection, so copying the
 * log into the database file and syncing it happen beside the event loop; the main connection does
 * not checkpoint in its commits (`wal_autocheckpoint = 0`). PASSIVE never blocks the main
 * connection, but the log only starts over when a writer begins after all of it was copied, which
 * under steady writes a copy made beside them never sees. So once a copy reports a log of
 * `startLogOverAt` frames or more, the store runs a PASSIVE checkpoint on the main connection between
 * its commits ({@link whenLogFull}): it copies only the frames committed during the worker's copy,
 * and the next commit starts the log over.
 * Worker failures are logged, never thrown; if the worker dies, `onWorkerLost` runs once.
 */
export class BackgroundCheckpointer {
  private readonly worker: Worker;
  private readonly logger: Logger;
  private readonly exited: Promise<void>;
  private stopping = false;
  private lost = false;
  private logFull: (() => void) | undefined;

  constructor(init: BackgroundCheckpointerInit) {
    this.logger = init.logger;
    const workerData: CheckpointWorkerData = {
      file: init.file,
      intervalMs: init.settings.intervalMs,
      minFrames: init.settings.minFrames,
    };
    this.worker = new Worker(workerUrl(), { workerData });
    // Never keeps the process alive; `stop()` still waits for it to exit.
    this.worker.unref();
    const workerLost = (fields: object) => {
      if (this.stopping || this.lost) return;
      this.lost = true;
      this.logger.error(
        fields,
        'the background checkpoint worker stopped; the store checkpoints in its commits again (wal_autocheckpoint)',
      );
      init.onWorkerLost();
    };
    const { startLogOverAt } = init;
    this.worker.on('message', (message: WorkerMessage) => {
      if (message.kind === 'checkpoint') {
        this.logger.debug(message, 'background checkpoint');
        if (!message.busy && startLogOverAt > 0 && message.walFrames >= startLogOverAt) this.logFull?.();
      } else if (message.kind === 'error') {
        this.logger.warn({ err: message.message }, 'a background checkpoint failed; the worker tries again');
      }
    });
    this.worker.on('error', (error) => workerLost({ err: error }));
    this.exited = new Promise((resolve) => {
      this.worker.once('exit', (code) => {
        workerLost({ exitCode: code });
        resolve();
      });
    });
  }

  /**
   * Sets what runs when the worker has copied a log of `startLogOverAt` frames or more: the store's
   * PASSIVE checkpoint on the main connection, which lets the next commit start the log over.
   */
  whenLogFull(listener: () => void): void {
    this.logFull = listener;
  }

  /**
   * Stops the worker: it finishes a checkpoint in flight, closes its connection and exits.
   * Resolves once it has exited; calling it again returns the same wait.
   */
  stop(): Promise<void> {
    if (!this.stopping) {
      this.stopping = true;
      // Held while it stops: an unref'd worker is no handle, so a process waiting only for its exit
      // would end (with a top-level await unsettled) before the exit arrived.
      this.worker.ref();
      this.worker.postMessage({ kind: 'stop' } satisfies WorkerMessage);
    }
    return this.exited;
  }
}
