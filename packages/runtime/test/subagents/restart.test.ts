import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { RunRecord, Store } from '@colloquy/core';
import { openPostgresStore } from '@colloquy/store-postgres';
import { openSqliteStore } from '@colloquy/store-sqlite';
import { createTestDatabase } from '@colloquy/testkit/postgres';
import { afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { startHarness, waitFor } from '../support/harness.js';
import { crashConfig, crashScript, MAIN } from './fixtures/crash-script.mjs';
import { allOutbox, announcesIn } from './subagents-fixture.js';

const RUNNER = fileURLToPath(new URL('./fixtures/crash-runner.mjs', import.meta.url));
const DIST = fileURLToPath(new URL('../../dist/index.js', import.meta.url));
const ROUNDS = 10;
const CHILDREN = 12;

const dirs: string[] = [];
let child: ChildProcess | undefined;
afterEach(() => {
  child?.kill('SIGKILL');
  child = undefined;
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** Starts the runner and SIGKILLs it `killAfterMs` after its first spawn. */
function runAndKill(
  database: string,
  workspace: string,
  sentFile: string,
  killAfterMs: number,
): Promise<string> {
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, [RUNNER, database, workspace, String(CHILDREN), sentFile], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child = proc;
    let out = '';
    let err = '';
    let armed = false;
    proc.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      if (out.includes('first\n') && !proc.killed && !armed) {
        armed = true;
        setTimeout(() => proc.kill('SIGKILL'), killAfterMs);
      }
    });
    proc.stderr!.on('data', (chunk: Buffer) => {
      err += chunk.toString();
    });
    proc.on('exit', (code, signal) => {
      if (signal === 'SIGKILL') resolve(out);
      else reject(new Error(`the runner exited with ${code}: ${err}`));
    });
    setTimeout(() => proc.kill('SIGKILL'), 10_000).unref();
  });
}

async function subagentRuns(store: Store): Promise<RunRecord[]> {
  return (await store.listRuns({})).filter((run) => run.lane === 'subagent');
}

describe.each(['sqlite', 'postgres'] as const)('restart after SIGKILL while sub-agents run (%s)', (kind) => {
  beforeAll(() => {
    if (!existsSync(DIST))
      throw new Error('Build the runtime first (pnpm --filter @colloquy/runtime build).');
  });

  it(`announces every child exactly once, completed or interrupted, over ${ROUNDS} random kills`, async () => {
    const outcomes = { done: 0, interrupted: 0, chatted: 0, cutSends: 0 };
    for (let round = 0; round < ROUNDS; round++) {
      const dir = mkdtempSync(join(tmpdir(), 'colloquy-crash-'));
      dirs.push(dir);
      const database =
        kind === 'postgres' ? await createTestDatabase(inject('postgresUrl')) : join(dir, 'colloquy.db');
      const killAfterMs = Math.floor(Math.random() * 60);
      const sentFile = join(dir, 'sent.jsonl');
      const out = await runAndKill(database, join(dir, 'workspaces'), sentFile, killAfterMs);

      // Odd rounds allow one attempt only: runs cut mid-way become `interrupted` instead of resuming.
      const maxRunAttempts = round % 2 === 1 ? 1 : 3;
      const h = await startHarness({
        store:
          kind === 'postgres'
            ? await openPostgresStore({ url: database })
            : openSqliteStore({ file: database }),
        script: crashScript(),
        config: crashConfig({ maxRunAttempts }),
        workspaceDir: join(dir, 'workspaces'),
        subagents: { pollMs: 20, retryBaseMs: 20 },
      });
      try {
        const store = h.store;
        await waitFor(
          async () =>
            (await store.listRuns({ statuses: ['queued', 'running'] })).length === 0 &&
            (await allOutbox(store)).every((row) => row.status !== 'pending') &&
            (await store.listInbox(MAIN)).length === 0,
          10_000,
          `round ${round} (killed after ${killAfterMs} ms) to settle`,
        );
        const runs = await subagentRuns(store);
        const announced = await announcesIn(store, MAIN);
        for (const run of runs) {
          expect(['done', 'interrupted']).toContain(run.status);
          outcomes[run.status as 'done' | 'interrupted']++;
          const row = await store.getOutbox(run.sessionKey, run.runId);
          expect(row?.status, `outbox row of ${run.runId}`).toBe('delivered');
          const status = (row!.payload as { status: string }).status;
          expect(status).toBe(run.status === 'done' ? 'ok' : 'interrupted');
          expect(
            announced.filter((a) => a.runId === run.runId),
            `announces of ${run.runId}`,
          ).toHaveLength(1);
        }
        // Nothing announced that is not a sub-agent run, and nothing twice.
        expect(announced).toHaveLength(runs.length);
        expect(await allOutbox(store)).toHaveLength(runs.length);
        if (out.includes('spawned\n')) expect(runs).toHaveLength(CHILDREN);

        // The chat, before and after the kill: at most one message per result, never the raw
        // block; a result with none was read by a turn whose send the kill cut (recorded so).
        // Every planned reply has been sent, or its cut send recorded (the restart settles those).
        await waitFor(async () =>
          (await store.listRuns({ sessionKey: MAIN })).every((run) => {
            const delivery = run.meta?.delivery as { status?: string } | undefined;
            return (
              run.meta?.pendingDelivery === undefined ||
              (delivery !== undefined && delivery.status !== 'sending')
            );
          }),
        );
        const chat = [
          ...(existsSync(sentFile)
            ? readFileSync(sentFile, 'utf8').trim().split('\n').filter(Boolean)
            : []
          ).map((line) => (JSON.parse(line) as { text: string }).text),
          ...h.channel.sent.map((m) => m.message.text),
        ];
        expect(chat.filter((text) => text.includes('Sub-agent'))).toEqual([]);
        const parentRuns = await store.listRuns({ sessionKey: MAIN });
        for (const run of runs) {
          const label = (await store.getOutbox(run.sessionKey, run.runId))!.payload as { label?: string };
          const mention = new RegExp(`\\b${label.label}\\b`);
          const messages = chat.filter((text) => mention.test(text));
          expect(messages.length, `chat messages about ${label.label}`).toBeLessThanOrEqual(1);
          if (messages.length === 0) {
            const reader = parentRuns.find((p) =>
              ((p.meta?.announceFallbacks as string[] | undefined) ?? []).some((line) => mention.test(line)),
            );
            expect(reader, `the turn that read ${label.label}`).toBeDefined();
            expect((reader!.meta?.delivery as { status?: string } | undefined)?.status, label.label).toBe(
              'failed',
            );
            outcomes.cutSends++;
          } else outcomes.chatted++;
        }
      } finally {
        await h.close();
      }
    }
    // Over ten rounds both endings happen (a sanity check that the kills landed mid-work).
    expect(outcomes.done).toBeGreaterThan(0);
    expect(outcomes.chatted).toBeGreaterThan(0);
    console.log(`restart (${kind}): ${JSON.stringify(outcomes)}`);
  }, 60_000);
});
