// What the main thread and the checkpoint worker send each other.

/** What the checkpoint worker starts with. */
export interface CheckpointWorkerData {
  /** The absolute path of the store file. */
  file: string;
  /** Milliseconds between checkpoint attempts. */
  intervalMs: number;
  /** Fewer frames than this waiting to be copied: skip the attempt. */
  minFrames: number;
}

/** A message between the main thread and the checkpoint worker. */
export type WorkerMessage =
  | { kind: 'ready' }
  | {
      kind: 'checkpoint';
      mode: 'PASSIVE' | 'RESTART';
      busy: boolean;
      walFrames: number;
      checkpointedFrames: number;
    }
  | { kind: 'error'; message: string }
  | { kind: 'stop' };
