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
      /** Another checkpoint was running: nothing was copied this time. */
      busy: boolean;
      /** Frames in the log when it ran. */
      walFrames: number;
      /** Frames of the log copied into the database file, by this checkpoint or before it. */
      checkpointedFrames: number;
    }
  | { kind: 'error'; message: string }
  | { kind: 'stop' };
