import { describe, expect, it } from 'vitest';
import type { SessionRecord } from '../interfaces/records.js';
import { isPatchChange } from './session-changes.js';

const before = {
  key: 'agent:main:main',
  sessionId: 's1',
  agentId: 'main',
  kind: 'main',
  createdAt: 1,
  updatedAt: 1,
  label: 'home',
  status: 'idle',
} as SessionRecord;

describe('isPatchChange', () => {
  it('counts a changed watched field, not bookkeeping, and never a new session', () => {
    expect(isPatchChange(before, { ...before, label: 'work' })).toBe(true);
    expect(isPatchChange(before, { ...before, status: 'running', updatedAt: 2 })).toBe(false);
    expect(isPatchChange(undefined, before)).toBe(false);
  });

  it('compares only the fields it is given (a patch names the fields that may differ)', () => {
    const next = { ...before, label: 'work', updatedAt: 2 };
    expect(isPatchChange(before, next, ['label', 'updatedAt'])).toBe(true);
    expect(isPatchChange(before, next, ['updatedAt'])).toBe(false);
    expect(isPatchChange(before, { ...before, label: 'home' }, ['label'])).toBe(false);
    expect(isPatchChange(before, { ...before, status: 'done' }, ['status', 'endedAt'])).toBe(false);
  });
});
