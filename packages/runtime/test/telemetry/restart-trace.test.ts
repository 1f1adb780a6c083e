import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openSqliteStore } from '@colloquy/store-sqlite';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startHarness, waitFor } from '../support/harness.js';
import { oneSpan, registerMemoryTelemetry, spansNamed } from '../support/telemetry.js';

const RUNNER = fileURLToPath(new URL('./fixtures/traced-runner.mjs', import.meta.url));
const DIST = fileURLToPath(new URL('../../dist/index.js', import.meta.url));
const telemetry = registerMemoryTelemetry();

interface SpanLine {
  name: string;
  traceId: string;
  spanId: string;
  parentSpanId?: string;
}

let child: ChildProcess | undefined;
let h: Harness | undefined;
let dir: string | undefined;
afterEach(async () => {
  child?.kill('SIGKILL');
  child = undefined;
  await h?.close();
  h = undefined;
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** Runs the traced runner until its sub-agent runs, then SIGKILLs it. */
function runUntilChildRuns(file: string, workspace: string, spansFile: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, [RUNNER, file, workspace, spansFile], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child = proc;
    let err = '';
    proc.stdout!.on('data', (chunk: Buffer) => {
      if (chunk.toString().includes('child-running') && !proc.killed)
        setTimeout(() => proc.kill('SIGKILL'), 100);
    });
    proc.stderr!.on('data', (chunk: Buffer) => {
      err += chunk.toString();
    });
    proc.on('exit', (code, signal) => {
      if (signal === 'SIGKILL') resolve();
      else reject(new Error(`the runner exited with ${code}: ${err}`));
    });
    setTimeout(() => proc.kill('SIGKILL'), 10_000).unref();
  });
}

describe('a spawn tree across a SIGKILL restart', () => {
  beforeAll(() => {
    if (!existsSync(DIST))
      throw new Error('Build the runtime first (pnpm --filter @colloquy/runtime build).');
  });

  it("resumes the killed sub-agent run in its parent's trace, under the spawning tool call", async () => {
    dir = mkdtempSync(join(tmpdir(), 'colloquy-trace-restart-'));
    const file = join(dir, 'colloquy.db');
    const spansFile = join(dir, 'spans.jsonl');
    await runUntilChildRuns(file, join(dir, 'workspaces'), spansFile);

    const before = readFileSync(spansFile, 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as SpanLine);
    const spawnCall = before.find((span) => span.name === 'execute_tool sessions_spawn');
    expect(spawnCall, 'the killed process traced the spawn').toBeDefined();
    // The child's first turn never ended: the kill cut it.
    expect(before.filter((span) => span.name === 'invoke_agent main')).toHaveLength(1);

    h = await startHarness({
      store: openSqliteStore({ file }),
      workspaceDir: join(dir, 'workspaces'),
      script: (request) => (request.system.includes('You are a sub-agent') ? 'found it' : 'thanks, helper'),
    });
    const store = h.store;
    await waitFor(
      async () => (await store.listOutbox({ statuses: ['delivered'] })).length === 1,
      5000,
      'the resumed child announced',
    );
    await waitFor(() => spansNamed(telemetry.spans(), 'colloquy.announce').length === 1);
    const spans = telemetry.spans();
    const childTurn = spansNamed(spans, 'invoke_agent ').find((span) =>
      String(span.attributes['gen_ai.conversation.id']).includes(':subagent:'),
    );
    expect(childTurn).toBeDefined();
    expect(childTurn!.spanContext().traceId).toBe(spawnCall!.traceId);
    expect(childTurn!.parentSpanContext?.spanId).toBe(spawnCall!.spanId);
    expect(childTurn!.parentSpanContext?.isRemote).toBe(true);
    const announce = oneSpan(spans, 'colloquy.announce');
    expect(announce.spanContext().traceId).toBe(spawnCall!.traceId);
    expect(announce.links[0]?.context.spanId).toBe(childTurn!.spanContext().spanId);
  });
});
