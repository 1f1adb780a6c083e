import { startTestPostgres, type TestPostgres } from '@colloquy/testkit/postgres';
import { runStoreConformance } from '@colloquy/testkit/store-conformance';
import { afterAll, beforeAll } from 'vitest';
import { openPostgresStore } from './postgres-store.js';

let server: TestPostgres;
beforeAll(async () => {
  server = await startTestPostgres();
});
afterAll(() => server?.stop());

runStoreConformance('PostgresStore', async () => openPostgresStore({ url: await server.createDatabase() }));
