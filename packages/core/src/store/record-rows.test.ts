import { describe, expect, it } from 'vitest';
import { isColloquyError } from '../errors/colloquy-error.js';
import type { PairingRecord, SessionRecord } from '../interfaces/records.js';
import { pairingRow, serializeRecord, sessionRow } from './record-rows.js';

describe('SQL row helpers', () => {
  it('puts the indexed columns in schema order, absent ones as null, the JSON last', () => {
    const session: SessionRecord = {
      key: 'agent:main:main',
      sessionId: 's1',
      agentId: 'main',
      kind: 'main',
      createdAt: 5,
      updatedAt: 7,
      label: 'ops',
    };
    expect(sessionRow(session, '{}')).toEqual([
      'agent:main:main',
      's1',
      'main',
      'main',
      7,
      null,
      'ops',
      null,
      '{}',
    ]);
  });

  it('keeps a pairing code only while it is pending', () => {
    const pending: PairingRecord = {
      channel: 'telegram',
      accountId: 'default',
      peerId: '42',
      status: 'pending',
      code: 'ABCD1234',
      createdAt: 1,
    };
    expect(pairingRow(pending, 'j')[4]).toBe('ABCD1234');
    expect(pairingRow({ ...pending, status: 'approved' }, 'j')[4]).toBeNull();
  });

  it('refuses a record that is not JSON with INVALID_ARGUMENT naming the record', () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    let thrown: unknown;
    try {
      serializeRecord(cyclic, 'run');
    } catch (error) {
      thrown = error;
    }
    expect(isColloquyError(thrown) ? thrown.code : thrown).toBe('INVALID_ARGUMENT');
    expect(String((thrown as Error).message)).toContain('The run cannot be stored');
  });
});
