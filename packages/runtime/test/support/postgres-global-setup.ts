import { startTestPostgres, type TestPostgres } from '@colloquy/testkit/postgres';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Admin URL of the throwaway PostgreSQL server the `postgres` store kind uses. */
    postgresUrl: string;
  }
}

let server: TestPostgres | undefined;

/** Starts one throwaway PostgreSQL server for the whole run (the `postgres` store kind). */
export async function setup(project: TestProject): Promise<void> {
  server = await startTestPostgres();
  project.provide('postgresUrl', server.url);
}

export async function teardown(): Promise<void> {
  await server?.stop();
}
