import { describe, expect, it } from 'vitest';
import type { InboundCommit, InboundCommitResult } from '../interfaces/turn-operations.js';
import { MemoryStore } from './memory-store.js';
import { turnOperations } from './turn-operations.js';

const KEY = 'agent:main:main';
const T0 = 1_700_000_000_000;

const inbound: InboundCommit = {
  session: {
    create: { key: KEY, sessionId: 's1', agentId: 'main', kind: 'main', createdAt: T0, updatedAt: T0 },
    update: { updatedAt: T0 + 1 },
  },
  run: {
    runId: 'r1',
    sessionKey: KEY,
    lane: 'main',
    status: 'queued',
    createdAt: T0,
    updatedAt: T0,
    message: 'hi',
    deliver: false,
    attempts: 0,
  },
};

describe('turnOperations', () => {
  it("uses a store's own operation when it has one", async () => {
    const store = new MemoryStore();
    const calls: InboundCommit[] = [];
    const own = Object.assign(store, {
      async commitInbound(commit: InboundCommit): Promise<InboundCommitResult> {
        calls.push(commit);
        return { status: 'duplicate' };
      },
    });
    expect(await turnOperations(own).commitInbound(inbound)).toEqual({ status: 'duplicate' });
    expect(calls).toEqual([inbound]);
    expect(await store.getRun('r1')).toBeUndefined();
  });

  it('falls back to the row-level calls, in one transaction', async () => {
    const store = new MemoryStore();
    expect(await turnOperations(store).commitInbound(inbound)).toMatchObject({ status: 'queued' });
    expect(await store.getRun('r1')).toMatchObject({ status: 'queued' });
    expect(await turnOperations(store).commitInbound(inbound)).toEqual({ status: 'duplicate' });
  });

  it('creates a session whose turn begins with the begin fields, a null clearing one', async () => {
    const store = new MemoryStore();
    const result = await turnOperations(store).commitInbound({
      ...inbound,
      session: { ...inbound.session, create: { ...inbound.session.create, endedAt: T0 } },
      begin: {
        input: { role: 'user', content: 'hi', timestamp: T0 },
        run: { ...inbound.run, status: 'running', attempts: 1 },
        session: { status: 'running', endedAt: null },
      },
    });
    expect(result.status).toBe('begun');
    const stored = await store.getSession(KEY);
    expect(stored).toMatchObject({ status: 'running' });
    expect(stored).not.toHaveProperty('endedAt');
  });
});
