import { existsSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { startTestPostgres } from './test-postgres.js';

const serverFolders = () => new Set(readdirSync(tmpdir()).filter((name) => name.startsWith('colloquy-pg-')));

describe('startTestPostgres', () => {
  it('serves databases, and stop() ends the server and removes its files', async () => {
    const before = serverFolders();
    const server = await startTestPostgres();
    const [folder] = [...serverFolders()]
      .filter((name) => !before.has(name))
      .map((name) => join(tmpdir(), name));
    expect(folder).toBeDefined();
    const url = await server.createDatabase();
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    expect((await client.query<{ one: number }>('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
    await client.end();

    await server.stop();
    const after = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2000 });
    await expect(after.connect()).rejects.toThrow();
    const deadline = Date.now() + 15_000;
    while (existsSync(folder!) && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 50));
    expect(existsSync(folder!)).toBe(false);
  }, 60_000);
});
