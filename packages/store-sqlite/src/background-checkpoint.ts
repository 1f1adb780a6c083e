import { Worker } from 'node:worker_threads';
import { ColloquyError, type Logger } from '@colloquy/core';
import type { CheckpointWorkerData, WorkerMessage } from './checkpoint-messages.js';

/** Settings of `SqliteStoreOptions.backgroundCheckpoint`; every field is optional. */
export interface BackgroundCheckpointOptions {
  /** Milliseconds between checkpoint attempts (default 1000). */
  intervalMs?: number;
  /** Skip an attempt while fewer log frames (pages) than this wait to be copied (default 100). */
  minFrames?: number;
}

/** {@link BackgroundCheckpointOptions} with the defaults applied. */
export interface BackgroundCheckpointSettings {
  /** Milliseconds between checkpoint attempts. */
  intervalMs: number;
  /** Fewer frames than this waiting to be copied: skip the attempt. */
  minFrames: number;
}

const DEFAULT_INTERVAL_MS = 1000;
const DEFAULT_MIN_FRAMES = 100;

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
  logger: Logger;
  /** Called once when the worker dies: the main connection must checkpoint on its own again. */
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
 * Runs `PRAGMA wal_checkpoint(PASSIVE)` on a worker thread with its own connection, so the main
 * connection (with `wal_autocheckpoint = 0`) never copies the log or syncs the database file
 * inside a commit. A PASSIVE checkpoint never blocks the writer; a RESTART checkpoint that gives up
 * at once when the write lock is taken then copies what was committed meanwhile, so the next
 * commit starts the log over from its beginning and the `-wal` file stays bounded (see
 * `checkpoint-worker.ts`).
 * Worker failures are logged, never thrown; if the worker dies, `onWorkerLost` runs once.
 */
export class BackgroundCheckpointer {
  private readonly worker: Worker;
  private readonly logger: Logger;
  private readonly exited: Promise<void>;
  private stopping = false;
  private lost = false;

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
    this.worker.on('message', (message: WorkerMessage) => {
      if (message.kind === 'checkpoint') this.logger.debug(message, 'background checkpoint');
      else if (message.kind === 'error') {
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
