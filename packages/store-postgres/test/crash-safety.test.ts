import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { startTestPostgres, type TestPostgres } from '@colloquy/testkit/postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPostgresStore } from '../src/postgres-store.js';

const ROUNDS = 10;
const KEY = 'agent:main:main';
const WRITER = fileURLToPath(new URL('./fixtures/crash-writer.mjs', import.meta.url));

let server: TestPostgres;
beforeAll(async () => {
  server = await startTestPostgres();
});
afterAll(() => server?.stop());

/** Starts the writer; resolves its output lines so far and its exit once killed. */
function startWriter(url: string): {
  child: ChildProcess;
  lines: string[];
  ready: Promise<void>;
  exited: Promise<string | null>;
} {
  const child = spawn(process.execPath, [WRITER, url], { stdio: ['ignore', 'pipe', 'pipe'] });
  const lines: string[] = [];
  let buffer = '';
  let stderr = '';
  let onReady: () => void = () => {};
  const ready = new Promise<void>((resolve) => {
    onReady = resolve;
  });
  child.stdout!.on('data', (chunk: Buffer) => {
    buffer += chunk.toString();
    const parts = buffer.split('\n');
    buffer = parts.pop() ?? '';
    for (const line of parts) {
      if (line === 'ready') onReady();
      else lines.push(line);
    }
  });
  child.stderr!.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const exited = new Promise<string | null>((resolve) => {
    child.on('exit', (_code, signal) => {
      if (signal !== 'SIGKILL') console.error(stderr);
      resolve(signal);
    });
  });
  return { child, lines, ready, exited };
}

describe('crash safety', () => {
  it(`keeps every acknowledged write when the writer is SIGKILLed at random moments (${ROUNDS} rounds)`, async () => {
    const url = await server.createDatabase();
    let acknowledged = 0;
    let runs = 0;
    for (let round = 0; round < ROUNDS; round++) {
      const writer = startWriter(url);
      await writer.ready;
      await new Promise((resolve) => setTimeout(resolve, 30 + Math.random() * 200));
      writer.child.kill('SIGKILL');
      expect(await writer.exited).toBe('SIGKILL');

      const store = await openPostgresStore({ url });
      try {
        const count = await store.countMessages(KEY);
        const all = await store.readTail(KEY, count);
        // Seqs are gap-free and each appears once.
        expect(all.map((m) => m.seq)).toEqual(Array.from({ length: count }, (_, i) => i + 1));
        for (const line of writer.lines) {
          const [kind, id, seq] = line.split(' ');
          const stored = all[Number(seq) - 1];
          if (kind === 'msg') expect(stored?.content, `round ${round}: ${line}`).toBe(id!.replace('_', ' '));
          else {
            expect(stored?.runId, `round ${round}: ${line}`).toBe(id);
            expect((await store.getRun(id!))?.status).toBe('running');
            runs++;
          }
          acknowledged++;
        }
        // A transaction is all or nothing: every run record has its transcript entry, once.
        const stored = await store.listRuns({ sessionKey: KEY });
        const inTranscript = all.filter((m) => m.runId !== undefined).map((m) => m.runId);
        expect(new Set(inTranscript).size).toBe(inTranscript.length);
        expect(stored.map((r) => r.runId).sort()).toEqual([...inTranscript].sort());
      } finally {
        await store.close();
      }
    }
    expect(acknowledged).toBeGreaterThan(0);
    expect(runs).toBeGreaterThan(0);
  }, 120_000);
});
