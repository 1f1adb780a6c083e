import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { ColloquyError } from '@colloquy/core';
import type {
  AuthenticationCreds,
  AuthenticationState,
  SignalDataSet,
  SignalDataTypeMap,
} from '@whiskeysockets/baileys';
import {
  createKeyedQueue,
  isAtomicTempFile,
  nodeStateFs,
  readFileIfExists,
  type StateFs,
  writeFileAtomic,
} from './atomic-file.js';
import { BufferJSON, initAuthCreds, proto } from './baileys.js';

/** What {@link useAtomicAuthState} returns: Baileys' auth state and the call that saves creds. */
export interface AtomicAuthState {
  /** Baileys' auth state (creds and signal keys); pass it as `auth` to the socket. */
  state: AuthenticationState;
  /** Writes the current creds atomically. Wire it to the socket's `creds.update`. */
  saveCreds(): Promise<void>;
  /** Resolves once every write started so far has finished. */
  flush(): Promise<void>;
}

/** Options of {@link useAtomicAuthState}. */
export interface AtomicAuthStateOptions {
  /** The file system (a seam for fault-injection tests). Default `node:fs/promises`. */
  fs?: StateFs;
}

const CREDS_FILE = 'creds.json';

/** Key ids hold `:`, `/`, `@` and more; keep file names portable and reversible. */
const fileNameFor = (type: string, id: string): string =>
  `${type}-${id.replace(/[^A-Za-z0-9._@-]/g, (c) => `%${c.charCodeAt(0).toString(16).padStart(2, '0')}`)}.json`;

const relinkHint = (dir: string): string =>
  `To re-link: stop the bot, delete the folder ${dir}, start the bot again and scan the new QR code ` +
  '(WhatsApp > Settings > Linked devices > Link a device).';

/**
 * Baileys auth state (creds + signal keys) in a folder, written crash-safely: every file is written
 * to a temp file, fsynced and renamed into place, so an interrupted write leaves the previous
 * version readable. Built on Baileys' own `initAuthCreds`, `BufferJSON` and `proto`.
 *
 * @param dir - the auth folder (created if missing); the plugin uses `<stateDir>/auth`
 * @param options - {@link AtomicAuthStateOptions}
 * @returns the state to pass as `auth` to the socket, and `saveCreds`
 * @throws ColloquyError `STORE_CORRUPT` when `creds.json` (or later, a key file) is not valid JSON,
 *   naming the file and how to re-link; `STORE_ERROR` when a write fails
 * @example
 * ```ts
 * const { state, saveCreds } = await useAtomicAuthState('/var/lib/bot/whatsapp/auth');
 * const sock = makeWASocket({ auth: state });
 * sock.ev.on('creds.update', saveCreds);
 * ```
 */
export async function useAtomicAuthState(
  dir: string,
  options: AtomicAuthStateOptions = {},
): Promise<AtomicAuthState> {
  const fs = options.fs ?? nodeStateFs;
  const queue = createKeyedQueue();
  const pending = new Set<Promise<unknown>>();

  await fs.mkdir(dir, { recursive: true });
  for (const name of await fs.readdir(dir)) {
    if (isAtomicTempFile(name)) await fs.unlink(join(dir, name)).catch(() => {});
  }

  const track = <T>(p: Promise<T>): Promise<T> => {
    pending.add(p);
    void p.then(
      () => pending.delete(p),
      () => pending.delete(p),
    );
    return p;
  };

  const read = async (file: string): Promise<unknown> => {
    const path = join(dir, file);
    const text = await queue(path, () => readFileIfExists(path, fs));
    if (text === undefined) return undefined;
    try {
      return JSON.parse(text, BufferJSON.reviver) as unknown;
    } catch (cause) {
      throw new ColloquyError(
        'STORE_CORRUPT',
        `WhatsApp auth file ${path} is corrupt (not valid JSON). ${relinkHint(dir)}`,
        { file: path, dir },
        { cause },
      );
    }
  };

  const write = (file: string, value: unknown): Promise<void> => {
    const path = join(dir, file);
    const data = JSON.stringify(value, BufferJSON.replacer);
    return track(
      queue(path, () => writeFileAtomic(path, data, fs)).catch((cause: unknown) => {
        throw new ColloquyError(
          'STORE_ERROR',
          `Could not write WhatsApp auth file ${path}: ${(cause as Error).message}. The previous version is kept; check disk space and permissions of ${dir}.`,
          { file: path, dir },
          { cause },
        );
      }),
    );
  };

  const remove = (file: string): Promise<void> => {
    const path = join(dir, file);
    return track(
      queue(path, () =>
        fs.unlink(path).catch((error: NodeJS.ErrnoException) => {
          if (error.code !== 'ENOENT') throw error;
        }),
      ),
    );
  };

  const creds = ((await read(CREDS_FILE)) as AuthenticationCreds | undefined) ?? initAuthCreds();

  return {
    state: {
      creds,
      keys: {
        async get<T extends keyof SignalDataTypeMap>(type: T, ids: string[]) {
          const out: { [id: string]: SignalDataTypeMap[T] } = {};
          await Promise.all(
            ids.map(async (id) => {
              let value = await read(fileNameFor(type, id));
              if (value === undefined) return;
              if (type === 'app-state-sync-key') {
                value = proto.Message.AppStateSyncKeyData.fromObject(value as Record<string, unknown>);
              }
              out[id] = value as SignalDataTypeMap[T];
            }),
          );
          return out;
        },
        async set(data: SignalDataSet) {
          const jobs: Promise<void>[] = [];
          for (const [type, entries] of Object.entries(data)) {
            for (const [id, value] of Object.entries(entries ?? {})) {
              const file = fileNameFor(type, id);
              jobs.push(value ? write(file, value) : remove(file));
            }
          }
          await Promise.all(jobs);
        },
      },
    },
    saveCreds: () => write(CREDS_FILE, creds),
    flush: async () => {
      while (pending.size > 0) await Promise.allSettled([...pending]);
    },
  };
}

/**
 * Deletes the stored WhatsApp link (the `auth` folder under `stateDir`) so the next start shows a
 * fresh QR code. Use it after WhatsApp logged the device out. The LID map and pairings are kept.
 *
 * @param stateDir - the plugin's state dir
 */
export async function resetWhatsAppAuth(stateDir: string): Promise<void> {
  await rm(join(stateDir, 'auth'), { recursive: true, force: true });
}
