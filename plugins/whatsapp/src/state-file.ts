import type { Logger } from '@colloquy/core';
import { readFileIfExists, type StateFs, writeFileAtomic } from './atomic-file.js';

/** What a {@link JsonStateFile} logs when its file is corrupt or cannot be saved. */
export interface StateFileMessages {
  corrupt: string;
  saveFailed: string;
}

/**
 * A small JSON file in the state dir that is rewritten (atomically) after changes: one write at a
 * time, and changes made while a write is pending are coalesced into the next one. A corrupt file
 * reads as missing, with a warning; a failed write is logged and the next change retries.
 */
export class JsonStateFile {
  private saving: Promise<void> = Promise.resolve();
  private dirty = false;

  constructor(
    readonly path: string,
    private readonly fs: StateFs,
    private readonly log: Logger,
    private readonly messages: StateFileMessages,
  ) {}

  /** The parsed content, or `undefined` when the file is missing or corrupt. */
  async read(): Promise<unknown> {
    const text = await readFileIfExists(this.path, this.fs);
    if (text === undefined) return undefined;
    try {
      return JSON.parse(text) as unknown;
    } catch (error) {
      this.log.warn({ file: this.path, err: (error as Error).message }, this.messages.corrupt);
      return undefined;
    }
  }

  /** Saves soon, with what `content` returns at the time of the write. */
  scheduleSave(content: () => unknown): void {
    if (this.dirty) return;
    this.dirty = true;
    this.saving = this.saving.then(async () => {
      this.dirty = false;
      try {
        await writeFileAtomic(this.path, `${JSON.stringify(content(), null, 2)}\n`, this.fs);
      } catch (error) {
        this.log.warn({ file: this.path, err: (error as Error).message }, this.messages.saveFailed);
      }
    });
  }

  /** Resolves once pending writes are on disk. */
  async flush(): Promise<void> {
    await this.saving;
  }
}
