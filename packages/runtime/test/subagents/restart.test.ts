import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { RunRecord } from '@colloquy/core/gateway';
import type { Store } from '@colloquy/core/store';
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

/** When the runner is killed: `killAfterMs` after the line `on` (`first`: the first spawn). */
interface Kill {
  on: 'first' | 'child-running';
  killAfterMs: number;
  /** How long each sub-agent turn of the runner takes (default a few ms). */
  childMs?: number;
}

/** Starts the runner and SIGKILLs it as `kill` says. */
function runAndKill(database: string, workspace: string, sentFile: string, kill: Kill): Promise<string> {
  return new Promise((resolve, reject) => {
    const args = [RUNNER, database, workspace, String(CHILDREN), sentFile];
    if (kill.childMs !== undefined) args.push(String(kill.childMs));
    const proc = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    child = proc;
    let out = '';
    let err = '';
    let armed = false;
    proc.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      if (out.includes(`${kill.on}\n`) && !proc.killed && !armed) {
        armed = true;
        setTimeout(() => proc.kill('SIGKILL'), kill.killAfterMs);
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

// The stores crash-tested here; `COLLOQUY_RESTART_STORES=sqlite` (or `postgres`) narrows it, e.g. to loop
// one variant while chasing a flake.
const STORES = (process.env.COLLOQUY_RESTART_STORES?.split(',') ?? ['sqlite', 'postgres']).filter(
  (kind): kind is 'sqlite' | 'postgres' => kind === 'sqlite' || kind === 'postgres',
);

describe.each(STORES)('restart after SIGKILL while sub-agents run (%s)', (kind) => {
  beforeAll(() => {
    if (!existsSync(DIST))
      throw new Error('Build the runtime first (pnpm --filter @colloquy/runtime build).');
  });

  it(`announces every child exactly once, completed or interrupted, over ${ROUNDS} random kills`, async () => {
    const outcomes = { done: 0, interrupted: 0, chatted: 0, cutSends: 0, chatMessages: 0 };
    for (let round = 0; round < ROUNDS; round++) {
      const dir = mkdtempSync(join(tmpdir(), 'colloquy-crash-'));
      dirs.push(dir);
      const database =
        kind === 'postgres' ? await createTestDatabase(inject('postgresUrl')) : join(dir, 'colloquy.db');
      // Even rounds: a random kill after the first spawn; the cut runs resume (three attempts).
      // Odd rounds allow one attempt only and kill while a slow child runs: it becomes `interrupted`.
      const odd = round % 2 === 1;
      const killAfterMs = odd ? 0 : Math.floor(Math.random() * 60);
      const sentFile = join(dir, 'sent.jsonl');
      const out = await runAndKill(
        database,
        join(dir, 'workspaces'),
        sentFile,
        odd ? { on: 'child-running', killAfterMs, childMs: 5000 } : { on: 'first', killAfterMs },
      );
      expect(out, `round ${round}: the runner spawned before the kill`).toContain('first\n');
      const maxRunAttempts = odd ? 1 : 3;
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
        // Each look first runs a forced drain and waits for it (and for the wakes it enqueues), so a
        // settled look cannot fall between a row written by the start's sweep and its delivery.
        const unsettled = async () => ({
          active: (await store.listRuns({ statuses: ['queued', 'running'] })).map(
            (r) => `${r.lane}:${r.status}`,
          ),
          pendingOutbox: (await allOutbox(store)).filter((row) => row.status === 'pending').length,
          inbox: (await store.listInbox(MAIN)).length,
        });
        await waitFor(
          async () => {
            await h.runtime.subagents.drain({ force: true });
            const state = await unsettled();
            return state.active.length === 0 && state.pendingOutbox === 0 && state.inbox === 0;
          },
          30_000,
          `round ${round} (killed after ${killAfterMs} ms) to settle`,
        ).catch(async (error: unknown) => {
          throw new Error(`${String(error)}; left: ${JSON.stringify(await unsettled())}`);
        });
        const runs = await subagentRuns(store);
        expect(runs.length, `round ${round}: sub-agent runs`).toBeGreaterThan(0);
        if (odd) expect(runs.map((run) => run.status)).toContain('interrupted');
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
            if (run.status === 'queued' || run.status === 'running') return false;
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
        outcomes.chatMessages += chat.length;
        const parentRuns = await store.listRuns({ sessionKey: MAIN });
        for (const run of runs) {
          const label = (await store.getOutbox(run.sessionKey, run.runId))!.payload as { label?: string };
          const mention = new RegExp(`\\b${label.label}\\b`);
          const messages = chat.filter((text) => mention.test(text));
          expect(
            messages.length,
            `chat messages about ${label.label} in round ${round}: ${JSON.stringify(messages)}; main runs: ${JSON.stringify(
              parentRuns.map((p) => ({ status: p.status, attempts: p.attempts, delivery: p.meta?.delivery })),
            )}`,
          ).toBeLessThanOrEqual(1);
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
    // Over the rounds both endings happen, and every result reached the chat once or was cut.
    expect(outcomes.done).toBeGreaterThan(0);
    expect(outcomes.interrupted).toBeGreaterThan(0);
    expect(outcomes.chatted + outcomes.cutSends).toBe(outcomes.done + outcomes.interrupted);
    expect(outcomes.chatted).toBeGreaterThan(0);
    expect(outcomes.chatMessages).toBeGreaterThan(0);
    console.log(`restart (${kind}): ${JSON.stringify(outcomes)}`);
  }, 180_000);
});
