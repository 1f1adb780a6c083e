import type { SessionRecord } from '@colloquy/core';
import type { RunRecord } from '@colloquy/core/gateway';

/** The fixed clock the record factories and the conformance suite use. */
export const T0 = 1_700_000_000_000;

/** A session record with sensible defaults, for tests. */
export function makeSessionRecord(key: string, overrides: Partial<SessionRecord> = {}): SessionRecord {
  const agentId = /^agent:([^:]+):/.exec(key)?.[1] ?? 'main';
  return {
    key,
    sessionId: `sid-${key}`,
    agentId,
    kind: 'other',
    createdAt: T0,
    updatedAt: T0,
    ...overrides,
  };
}

/** A run record with sensible defaults, for tests. */
export function makeRunRecord(
  runId: string,
  sessionKey: string,
  overrides: Partial<RunRecord> = {},
): RunRecord {
  return {
    runId,
    sessionKey,
    lane: 'main',
    status: 'queued',
    createdAt: T0,
    updatedAt: T0,
    message: 'hello',
    deliver: false,
    attempts: 0,
    ...overrides,
  };
}
