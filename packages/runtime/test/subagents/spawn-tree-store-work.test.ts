import { createSessionTools, resolveConfig } from '@colloquy/core';
import type { Store, TranscriptMessage } from '@colloquy/core/store';
import { makeRunRecord, makeSessionRecord, T0 } from '@colloquy/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { type Harness, STORE_KINDS, type StoreKind } from '../support/harness.js';
import { type RecordingStore, startRecordingHarness, tallyCalls } from '../support/recording-store.js';
import { call, MAIN, seedMain } from './subagents-fixture.js';

/** Children per session; with {@link DEPTH} levels: 6 + 36 + 216 = 258 sub-agents. */
const BRANCHING = 6;
const DEPTH = 3;
const NODES = BRANCHING + BRANCHING ** 2 + BRANCHING ** 3;
/** Runs per sub-agent: an earlier one and the latest. */
const RUNS_PER_SESSION = 2;

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

/** The tool-call turn each run leaves in its transcript: the task, a call, its result, the answer. */
function turnOf(runId: string, at: number): TranscriptMessage[] {
  const callId = `call-${runId}`;
  return [
    { role: 'user', content: 'the task', timestamp: at, runId },
    {
      role: 'assistant',
      content: [{ type: 'toolCall', id: callId, name: 'echo', arguments: { text: 'hi' } }],
      timestamp: at + 1,
      runId,
    },
    { role: 'toolResult', content: 'hi', toolCallId: callId, toolName: 'echo', timestamp: at + 2, runId },
    { role: 'assistant', content: 'done', timestamp: at + 3, runId },
  ];
}

/**
 * A spawn tree under MAIN of {@link DEPTH} levels, {@link BRANCHING} children each, every sub-agent
 * with {@link RUNS_PER_SESSION} settled runs (announce recorded) and their transcripts, written
 * one level per transaction (past the recorder: the seeding counts nothing).
 */
async function seedTree(store: Store): Promise<void> {
  await seedMain(store);
  let parents = [MAIN];
  let n = 0;
  for (let depth = 1; depth <= DEPTH; depth++) {
    const next: string[] = [];
    await store.transaction(async (tx) => {
      for (const parent of parents) {
        for (let i = 0; i < BRANCHING; i++) {
          const key = `agent:main:subagent:n${n++}`;
          const at = T0 + n * 100;
          await tx.putSession(
            makeSessionRecord(key, {
              kind: 'subagent',
              spawnedBy: parent,
              spawnDepth: depth,
              label: `L${n}`,
              status: 'done',
              createdAt: at,
              updatedAt: at + 50,
            }),
          );
          const messages: TranscriptMessage[] = [];
          for (let r = 0; r < RUNS_PER_SESSION; r++) {
            const runId = `${key}-run${r}`;
            const started = at + r * 10;
            await tx.createRun(
              makeRunRecord(runId, key, {
                lane: 'subagent',
                status: 'done',
                spawnedBy: parent,
                createdAt: started,
                startedAt: started,
                endedAt: started + 5,
                updatedAt: started + 5,
                announce: { outcome: 'delivered', at: started + 6 },
              }),
            );
            messages.push(...turnOf(runId, started));
          }
          await tx.appendMessages(key, messages);
          next.push(key);
        }
      }
    });
    parents = next;
  }
}

/** A harness on a recording store of `kind`, with the tree seeded past the recorder. */
async function startTreeHarness(kind: StoreKind): Promise<RecordingStore> {
  const { harness, recorder, inner } = await startRecordingHarness(kind, {
    // The announce poll and the sub-agent sweep run on timers of their own, not in a read.
    subagents: { pollMs: 3_600_000, sweepMs: 3_600_000 },
  });
  h = harness;
  await seedTree(inner);
  return recorder;
}

// Seeding 258 sessions with their runs and transcripts takes a few seconds on PostgreSQL, and
// several times that on a loaded machine (20 s, the default, ran out at a load average of 36).
describe.each(STORE_KINDS)('the store work of reading a spawn tree (%s)', { timeout: 60_000 }, (kind) => {
  it(`sessions.tree over ${NODES} sub-agents ${DEPTH} levels deep makes O(depth) store calls`, async () => {
    const recorder = await startTreeHarness(kind);
    recorder.reset();
    const tree = await h!.runtime.gateway.call('sessions.tree', { key: MAIN });
    const recording = recorder.recording();
    expect(tree.nodes).toHaveLength(NODES + 1);
    expect(tree.nodes.at(-1)!.runs).toHaveLength(RUNS_PER_SESSION);
    expect(tree.nodes.at(-1)!.runs[1]!.toolCalls).toHaveLength(1);
    const counts = JSON.stringify(tallyCalls(recording));
    console.info(`sessions.tree, ${kind}: ${recording.calls.length} store calls ${counts}`);
    // The root (by key and by sessionId), one list per level (and the empty one below the leaves),
    // then the runs and the transcript tails of every node in one batch each.
    expect(recording.calls.length, `store calls: ${counts}`).toBeLessThanOrEqual(2 + (DEPTH + 1) + 2);
  });

  it(`subagents list over ${NODES} sub-agents ${DEPTH} levels deep makes O(depth) store calls`, async () => {
    const recorder = await startTreeHarness(kind);
    const config = resolveConfig({ agents: { defaults: { model: 'scripted/test' } } });
    const tools = createSessionTools({
      requesterKey: MAIN,
      agentId: 'main',
      config,
      gateway: h!.runtime.gateway,
    });
    const subagents = tools.find((tool) => tool.name === 'subagents')!;
    recorder.reset();
    const listed = await call<{ count: number; subagents: { runId?: string }[] }>(subagents, {
      action: 'list',
    });
    const recording = recorder.recording();
    // The tool reads at most 500 sessions of a tree: every one of these.
    expect(listed.count).toBe(NODES);
    expect(listed.subagents.at(-1)!.runId).toMatch(/-run1$/);
    const counts = JSON.stringify(tallyCalls(recording));
    console.info(`subagents list, ${kind}: ${recording.calls.length} store calls ${counts}`);
    // Per level (and the empty one below the leaves): one list of its sessions, one read of their
    // latest runs.
    expect(recording.calls.length, `store calls: ${counts}`).toBeLessThanOrEqual(2 * (DEPTH + 1));
  });

  it(`sessions_list at tree visibility over ${NODES} sub-agents walks the scope a level per store call`, async () => {
    const recorder = await startTreeHarness(kind);
    const config = resolveConfig({ agents: { defaults: { model: 'scripted/test' } } });
    const tools = createSessionTools({
      requesterKey: MAIN,
      agentId: 'main',
      config,
      gateway: h!.runtime.gateway,
    });
    const list = tools.find((tool) => tool.name === 'sessions_list')!;
    recorder.reset();
    const listed = await call<{ count: number }>(list, { limit: 200 });
    const recording = recorder.recording();
    expect(listed.count).toBe(200);
    const counts = JSON.stringify(tallyCalls(recording));
    console.info(`sessions_list, ${kind}: ${recording.calls.length} store calls ${counts}`);
    const lists = recording.calls.filter((made) => made.method === 'listSessions').length;
    // The scope's walk: a list per level (and the empty one below the leaves); then the page, and
    // the counts of what visibility hid.
    expect(lists, `store calls: ${counts}`).toBeLessThanOrEqual(DEPTH + 1 + 6);
    expect(recording.calls.length, `store calls: ${counts}`).toBeLessThanOrEqual(2 * (DEPTH + 1) + 12);
  });
});
