import { startTestPostgres, type TestPostgres } from '@colloquy/testkit/postgres';
import { runStoreConformance } from '@colloquy/testkit/store-conformance';
import { afterAll, beforeAll } from 'vitest';
import { openPostgresStore } from './postgres-store.js';

let server: TestPostgres;
beforeAll(async () => {
  server = await startTestPostgres();
});
// Stopping the cluster after this suite's 60-odd databases took over a minute on a 2-core machine at
// load 15-24 (the tests themselves all passed; a lone stop after 40 databases takes about 6 s).
afterAll(() => server?.stop(), 180_000);

runStoreConformance('PostgresStore', async () => openPostgresStore({ url: await server.createDatabase() }));
