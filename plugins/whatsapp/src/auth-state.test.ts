import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isColloquyError } from '@colloquy/core';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { nodeStateFs, type StateFs } from './atomic-file.js';
import { resetWhatsAppAuth, useAtomicAuthState } from './auth-state.js';
import { proto } from './baileys.js';

/** A real file system whose next write of a matching file stops half-way with an I/O error. */
function crashingFs(match: string): StateFs & { armed: boolean } {
  const fs: StateFs & { armed: boolean } = {
    ...nodeStateFs,
    armed: false,
    async open(path, flags) {
      const handle = await nodeStateFs.open(path, flags);
      if (flags !== 'w' || !fs.armed || !path.includes(match)) return handle;
      fs.armed = false;
      return {
        writeFile: async (data) => {
          await handle.writeFile(data.slice(0, Math.floor(data.length / 2)));
          throw new Error('EIO: simulated crash mid-write');
        },
        sync: () => handle.sync(),
        close: () => handle.close(),
      };
    },
  };
  return fs;
}

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'wa-auth-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('useAtomicAuthState', () => {
  it('creates fresh creds with Baileys and reads back the same keys after a save', async () => {
    const first = await useAtomicAuthState(dir);
    expect(first.state.creds.registered).toBe(false);
    first.state.creds.me = { id: '15550001111:3@s.whatsapp.net', name: 'Owner' };
    await first.saveCreds();

    const second = await useAtomicAuthState(dir);
    expect(second.state.creds.me?.id).toBe('15550001111:3@s.whatsapp.net');
    expect(Buffer.from(second.state.creds.noiseKey.public)).toEqual(
      Buffer.from(first.state.creds.noiseKey.public),
    );
    expect(Buffer.isBuffer(second.state.creds.noiseKey.private)).toBe(true);
  });

  it('stores, revives and deletes signal keys', async () => {
    const auth = await useAtomicAuthState(dir);
    await auth.state.keys.set({
      session: { '15550002222.0': new Uint8Array([1, 2, 3]) },
      'app-state-sync-key': { 'AAAA/BB:1': { keyData: new Uint8Array([9, 9]), timestamp: 5 } },
    });
    const reloaded = await useAtomicAuthState(dir);
    const sessions = await reloaded.state.keys.get('session', ['15550002222.0', 'missing']);
    expect(Buffer.from(sessions['15550002222.0'] ?? [])).toEqual(Buffer.from([1, 2, 3]));
    expect('missing' in sessions).toBe(false);
    const syncKeys = await reloaded.state.keys.get('app-state-sync-key', ['AAAA/BB:1']);
    expect(syncKeys['AAAA/BB:1']).toBeInstanceOf(proto.Message.AppStateSyncKeyData);

    await reloaded.state.keys.set({ session: { '15550002222.0': null } });
    expect(await reloaded.state.keys.get('session', ['15550002222.0'])).toEqual({});
  });

  it('keeps the previous creds readable when a write is interrupted mid-way', async () => {
    const fs = crashingFs('creds.json');
    const auth = await useAtomicAuthState(dir, { fs });
    auth.state.creds.me = { id: '15550001111:3@s.whatsapp.net', name: 'Before' };
    await auth.saveCreds();

    auth.state.creds.me = { id: '15550001111:3@s.whatsapp.net', name: 'After' };
    fs.armed = true;
    const failure = await auth.saveCreds().catch((e: unknown) => e);
    expect(isColloquyError(failure) && failure.code).toBe('STORE_ERROR');
    expect(String((failure as Error).message)).toContain('previous version is kept');

    const reloaded = await useAtomicAuthState(dir);
    expect(reloaded.state.creds.me?.name).toBe('Before');
    expect((await readdir(dir)).filter((n) => n.endsWith('.tmp'))).toEqual([]);
  });

  it('reports a corrupt creds file with its path and how to re-link', async () => {
    await writeFile(join(dir, 'creds.json'), '{"noiseKey": {"private": ');
    const error = await useAtomicAuthState(dir).catch((e: unknown) => e);
    expect(isColloquyError(error) && error.code).toBe('STORE_CORRUPT');
    expect((error as Error).message).toContain(join(dir, 'creds.json'));
    expect((error as Error).message).toContain('re-link');
    expect(isColloquyError(error) && error.details.file).toBe(join(dir, 'creds.json'));
  });

  it('removes temp files left by a crash when it loads', async () => {
    await writeFile(join(dir, 'creds.json.4242.7.tmp'), '{"half');
    await useAtomicAuthState(dir);
    expect(await readdir(dir)).toEqual([]);
  });

  it('serialises concurrent saves so the last one wins', async () => {
    const auth = await useAtomicAuthState(dir);
    const saves: Promise<void>[] = [];
    for (let i = 0; i < 20; i++) {
      auth.state.creds.nextPreKeyId = i;
      saves.push(auth.saveCreds());
    }
    await Promise.all(saves);
    const text = await readFile(join(dir, 'creds.json'), 'utf8');
    expect(JSON.parse(text).nextPreKeyId).toBe(19);
  });
});

describe('resetWhatsAppAuth', () => {
  it('deletes the auth folder so the next start links anew', async () => {
    const auth = await useAtomicAuthState(join(dir, 'auth'));
    await auth.saveCreds();
    await resetWhatsAppAuth(dir);
    expect(await readdir(dir)).toEqual([]);
  });
});
