import type { OutboxEntry, RunStatus, StoredMessage } from '@colloquy/core/store';
import { describe, expect, it } from 'vitest';
import { announceOf, toolCallsByRun } from './tree-run-details.js';

let seq = 0;
const message = (fields: Omit<StoredMessage, 'seq'>): StoredMessage => ({ seq: ++seq, ...fields });
const step = (runId: string, at: number, calls: Array<[id: string, name: string]>): StoredMessage =>
  message({
    role: 'assistant',
    runId,
    timestamp: at,
    content: calls.map(([id, name]) => ({ type: 'toolCall', id, name, arguments: {} })),
  });
const result = (runId: string, at: number, id: string, name: string, isError = false): StoredMessage =>
  message({
    role: 'toolResult',
    runId,
    timestamp: at,
    toolCallId: id,
    toolName: name,
    content: '{}',
    ...(isError ? { isError } : {}),
  });
const runs = (entries: Record<string, RunStatus>) =>
  new Map(Object.entries(entries).map(([id, status]) => [id, { status }]));

describe('toolCallsByRun', () => {
  it('starts each call of a step when the call before it ended, and ends it with its result', () => {
    const calls = toolCallsByRun(
      [
        message({ role: 'user', runId: 'r1', timestamp: 100, content: 'go' }),
        step('r1', 200, [
          ['a', 'echo'],
          ['b', 'wait'],
        ]),
        result('r1', 250, 'a', 'echo'),
        result('r1', 400, 'b', 'wait', true),
        step('r1', 500, [['c', 'echo']]),
        result('r1', 520, 'c', 'echo'),
      ],
      runs({ r1: 'done' }),
    );
    expect(calls.get('r1')).toEqual([
      { toolCallId: 'a', name: 'echo', startedAt: 200, endedAt: 250, outcome: 'ok' },
      { toolCallId: 'b', name: 'wait', startedAt: 250, endedAt: 400, outcome: 'error' },
      { toolCallId: 'c', name: 'echo', startedAt: 500, endedAt: 520, outcome: 'ok' },
    ]);
  });

  it('marks a call without a result running in an active run and unfinished in an ended one', () => {
    const messages = [step('r1', 10, [['a', 'wait']]), step('r2', 20, [['b', 'wait']])];
    const calls = toolCallsByRun(messages, runs({ r1: 'running', r2: 'killed' }));
    expect(calls.get('r1')?.[0]).toEqual({
      toolCallId: 'a',
      name: 'wait',
      startedAt: 10,
      outcome: 'running',
    });
    expect(calls.get('r2')?.[0]).toEqual({
      toolCallId: 'b',
      name: 'wait',
      startedAt: 20,
      outcome: 'unfinished',
    });
  });

  it('keeps a result whose step is older than the tail, and skips runs it was not asked for', () => {
    const calls = toolCallsByRun(
      [result('r1', 30, 'a', 'echo'), step('other', 40, [['x', 'echo']])],
      runs({ r1: 'done' }),
    );
    expect(calls.get('r1')).toEqual([
      { toolCallId: 'a', name: 'echo', startedAt: 30, endedAt: 30, outcome: 'ok' },
    ]);
    expect(calls.has('other')).toBe(false);
  });
});

describe('announceOf', () => {
  const row = (status: OutboxEntry['status']): OutboxEntry => ({
    childSessionKey: 'agent:main:subagent:c',
    runId: 'r1',
    requesterSessionKey: 'agent:main:main',
    status,
    payload: {},
    attempts: 1,
    nextAttemptAt: 0,
    createdAt: 100,
    updatedAt: 300,
    ...(status === 'delivered' ? { deliveredAt: 200 } : {}),
  });

  it('takes the outcome recorded on the run first', () => {
    const run = { spawnedBy: 'agent:main:main', announce: { outcome: 'denied' as const, at: 50 } };
    expect(announceOf(run, row('pending'))).toEqual({ to: 'agent:main:main', state: 'denied', at: 50 });
  });

  it('reads an unsettled announce from its outbox row: pending, delivered, skipped, parked as failed', () => {
    const run = { spawnedBy: 'agent:main:main' };
    expect(announceOf(run, row('pending'))).toEqual({ to: 'agent:main:main', state: 'pending', at: 100 });
    expect(announceOf(run, row('delivered'))?.state).toBe('delivered');
    expect(announceOf(run, row('delivered'))?.at).toBe(200);
    expect(announceOf(run, row('skipped'))?.state).toBe('skipped');
    expect(announceOf(run, row('parked'))).toEqual({ to: 'agent:main:main', state: 'failed', at: 300 });
  });

  it('gives nothing for a run that announces nothing', () => {
    expect(announceOf({}, undefined)).toBeUndefined();
    expect(announceOf({ spawnedBy: 'agent:main:main' }, undefined)).toBeUndefined();
  });
});
