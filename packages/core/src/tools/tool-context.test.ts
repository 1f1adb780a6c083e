import { describe, expect, it } from 'vitest';
import { ColloquyError } from '../errors/colloquy-error.js';
import { gatewayFailure } from './tool-context.js';

describe('gatewayFailure', () => {
  it('tells the model that the store failed without the message, which names the database', () => {
    const error = new ColloquyError(
      'STORE_ERROR',
      'PostgreSQL at 127.0.0.1:54321 refused a store operation: invalid byte sequence.',
      { host: '127.0.0.1', port: 54321 },
    );
    const failure = gatewayFailure(error, 'Listing sessions failed.');
    expect(failure).toEqual({
      status: 'error',
      error: 'Listing sessions failed. The session store failed to answer (STORE_ERROR); try again later.',
    });
  });

  it('passes other typed errors on, forbidden ones as forbidden', () => {
    const denied = new ColloquyError('SEND_DENIED', 'Send policy denies this session.');
    expect(gatewayFailure(denied, 'x')).toEqual({ status: 'forbidden', error: denied.message });
    expect(gatewayFailure(new Error('boom'), 'It failed.')).toEqual({
      status: 'error',
      error: 'It failed. boom',
    });
  });
});
