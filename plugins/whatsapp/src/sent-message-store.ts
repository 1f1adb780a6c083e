import { join } from 'node:path';
import type { Logger } from '@colloquy/core';
import type { proto } from '@whiskeysockets/baileys';
import { LRUCache } from 'lru-cache';
import { nodeStateFs, type StateFs } from './atomic-file.js';
import { BufferJSON } from './baileys.js';
import { JsonStateFile } from './state-file.js';

const FILE = 'sent-messages.json';

/** How many sent messages are kept by default. */
export const DEFAULT_SENT_MESSAGE_CAPACITY = 500;

interface SentMessagesFile {
  version: 1;
  /** Message id -> the message content (BufferJSON-encoded), oldest first. */
  messages: Record<string, unknown>;
}

/**
 * The messages the bot sent, by id, kept in `<stateDir>/sent-messages.json` (the newest
 * `capacity`). Baileys' `getMessage` reads it when a recipient's device asks for a retry, so a
 * message sent before a restart can still be re-encrypted and delivered.
 */
export class SentMessageStore {
  private readonly messages: LRUCache<string, proto.IMessage>;

  private constructor(
    private readonly file: JsonStateFile,
    capacity: number,
  ) {
    this.messages = new LRUCache({ max: capacity });
  }

  /** Loads the store; a corrupt file is reported and ignored. */
  static async load(
    stateDir: string,
    log: Logger,
    fs: StateFs = nodeStateFs,
    capacity = DEFAULT_SENT_MESSAGE_CAPACITY,
  ): Promise<SentMessageStore> {
    const store = new SentMessageStore(
      new JsonStateFile(join(stateDir, FILE), fs, log, {
        corrupt: 'WhatsApp sent-message store is corrupt; starting empty (retries of older sends will fail)',
        saveFailed: 'could not save the WhatsApp sent-message store',
      }),
      capacity,
    );
    const parsed = (await store.file.read()) as Partial<SentMessagesFile> | undefined;
    for (const [id, encoded] of Object.entries(parsed?.messages ?? {})) {
      store.messages.set(id, JSON.parse(JSON.stringify(encoded), BufferJSON.reviver) as proto.IMessage);
    }
    return store;
  }

  /** The content of a message the bot sent, if it is still kept. */
  get(id: string): proto.IMessage | undefined {
    return this.messages.get(id);
  }

  /** Keeps a sent message (saved soon). */
  record(id: string, message: proto.IMessage | null | undefined): void {
    if (!message) return;
    this.messages.set(id, message);
    this.file.scheduleSave((): SentMessagesFile => {
      const out: Record<string, unknown> = {};
      for (const key of this.messages.rkeys()) {
        // `peek` leaves the order alone: the file lists the messages oldest first.
        out[key] = JSON.parse(JSON.stringify(this.messages.peek(key), BufferJSON.replacer)) as unknown;
      }
      return { version: 1, messages: out };
    });
  }

  /** Resolves once pending writes are on disk. */
  async flush(): Promise<void> {
    await this.file.flush();
  }
}
