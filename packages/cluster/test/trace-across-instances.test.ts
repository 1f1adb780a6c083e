// One spawn tree is one trace, also when its runs are taken by different instances: the trace
// context kept with the child's run record (which its cluster job reads back) is what carries it.
import type { ModelRequest } from '@colloquy/core/model';
import { makeSessionRecord, messageText, type ScriptFn } from '@colloquy/testkit';
import { startTestPostgres, type TestPostgres } from '@colloquy/testkit/postgres';
import type { ReadableSpan } from '@opentelemetry/sdk-trace';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startInstance, stopInstances } from './support/instances.js';
import { registerMemorySpans } from './support/memory-spans.js';
import { until } from './support/until.js';

// Before any runtime is created: a runtime checks for a registered SDK once, when it is created.
const spans = registerMemorySpans();

let server: TestPostgres;
beforeAll(async () => {
  server = await startTestPostgres();
});
afterAll(async () => {
  await server?.stop();
});
afterEach(stopInstances);

const MAIN = 'agent:main:main';
const BLOCKER = 'agent:main:memory:dm:blocker';

/** A promise and the function that settles it. */
function gate(): { opened: Promise<void>; open: () => void } {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { opened, open };
}

const isSubagent = (request: ModelRequest) => request.system.includes('You are a sub-agent');
const asks = (request: ModelRequest, text: string) =>
  request.messages.some((m) => m.role === 'user' && messageText(m).includes(text));
const named = (name: string) => spans().filter((span) => span.name === name);
const isChildOf = (child: ReadableSpan, parent: ReadableSpan) =>
  child.spanContext().traceId === parent.spanContext().traceId &&
  child.parentSpanContext?.spanId === parent.spanContext().spanId;

describe('a spawn tree across two instances', () => {
  it("runs the child that instance B took in the parent's trace, under the spawning tool call, its announce linked to it", async () => {
    const url = await server.createDatabase();
    const blockerHeld = gate();
    const spawnHeld = gate();
    const script: ScriptFn = async (request) => {
      if (isSubagent(request)) return 'child result';
      if (asks(request, 'hold the lane')) {
        await blockerHeld.opened;
        return 'released';
      }
      if (request.messages.at(-1)?.role === 'toolResult') return 'waiting for the helper';
      if (asks(request, 'start a helper') && request.messages.length === 1) {
        await spawnHeld.opened;
        return { toolCalls: [{ name: 'sessions_spawn', arguments: { task: 'help', label: 'helper' } }] };
      }
      return 'the helper is done';
    };
    // A has one sub-agent worker, held by a turn on the sub-agent lane until the end: the child's
    // job can only be taken by B.
    const a = await startInstance(url, { script, config: { runtime: { lanes: { subagent: 1 } } } });
    await a.store.putSession(makeSessionRecord(MAIN, { kind: 'main', agentId: 'main' }));
    await a.store.putSession(makeSessionRecord(BLOCKER, { kind: 'dm' }));
    const blocker = await a.runtime.gateway.call('agent', {
      sessionKey: BLOCKER,
      message: 'hold the lane',
      lane: 'subagent',
      deliver: false,
    });
    await until(() => a.model.requests.some((r) => asks(r, 'hold the lane')), "A's sub-agent lane is busy");
    // The parent's turn runs on A: B is not started yet.
    await a.runtime.gateway.call('agent', { sessionKey: MAIN, message: 'start a helper', deliver: false });
    await until(() => a.model.requests.some((r) => asks(r, 'start a helper')), "the parent's turn runs on A");
    const b = await startInstance(url, { script });
    spawnHeld.open();

    await until(
      async () => (await a.store.listOutbox({ statuses: ['delivered'] })).length === 1,
      "the child's announce was delivered",
    );
    await until(() => named('colloquy.announce').length === 1, 'the announce span ended');
    blockerHeld.open();
    await a.runtime.gateway.call('agent.wait', { runId: blocker.runId, timeoutMs: 10_000 });

    expect(b.model.requests.filter(isSubagent), 'B ran the child').toHaveLength(1);
    expect(a.model.requests.filter(isSubagent), 'A did not').toHaveLength(0);
    const [child] = await a.store.listRuns({ spawnedBy: MAIN });
    const turns = spans().filter((span) => span.name.startsWith('invoke_agent '));
    const parentTurn = turns.find((span) => span.attributes['gen_ai.conversation.id'] === MAIN)!;
    const childTurn = turns.find((span) => span.attributes['colloquy.run.id'] === child!.runId);
    const [spawn] = named('execute_tool sessions_spawn');
    expect(childTurn, "the child's invoke_agent span").toBeDefined();
    expect(isChildOf(spawn!, parentTurn)).toBe(true);
    expect(isChildOf(childTurn!, spawn!)).toBe(true);
    // Its parent came from the database, not from a context shared in this process.
    expect(childTurn!.parentSpanContext?.isRemote).toBe(true);
    expect(childTurn!.attributes['colloquy.tree.id']).toBe(parentTurn.spanContext().traceId);

    const [announce] = named('colloquy.announce');
    expect(isChildOf(announce!, spawn!)).toBe(true);
    expect(announce!.links.map((link) => link.context.spanId)).toEqual([childTurn!.spanContext().spanId]);
  });
});
