import { describe, expect, it } from 'vitest';
import type { DatabaseAddress } from './database-url.js';
import { isConnectionError, toStoreError } from './pg-errors.js';

const address: DatabaseAddress = { host: '127.0.0.1', port: 5432, database: 'colloquy' };

describe('toStoreError', () => {
  it('marks a lost or refused connection retryable, naming host and port only', () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
    expect(toStoreError(refused, address)).toMatchObject({
      code: 'STORE_ERROR',
      details: { host: '127.0.0.1', port: 5432, retryable: true, pgCode: 'ECONNREFUSED' },
    });
    const shutdown = Object.assign(new Error('terminating connection due to administrator command'), {
      code: '57P01',
    });
    expect(toStoreError(shutdown, address).details).toMatchObject({ retryable: true });
  });

  it('marks a connection that could not be opened in time retryable', () => {
    const error = toStoreError(new Error('Connection terminated due to connection timeout'), address);
    expect(error.details).toMatchObject({ retryable: true });
    expect(error.message).toContain('nothing of the interrupted call was committed');
    // The client's own connect timeout.
    expect(toStoreError(new Error('timeout expired'), address).details).toMatchObject({ retryable: true });
  });

  it("tells a busy pool's checkout timeout from a lost server: retryable, reason pool-busy", () => {
    const busy = new Error('timeout exceeded when trying to connect');
    expect(isConnectionError(busy)).toBe(false);
    const error = toStoreError(busy, address);
    expect(error.details).toEqual({ host: '127.0.0.1', port: 5432, retryable: true, reason: 'pool-busy' });
    expect(error.message).toContain('raise maxConnections');
  });

  it('leaves a refusal of the statement itself final', () => {
    const unique = Object.assign(new Error('duplicate key value violates unique constraint'), {
      code: '23505',
    });
    const error = toStoreError(unique, address);
    expect(error.details).toEqual({ host: '127.0.0.1', port: 5432, pgCode: '23505' });
  });
});
