import { describe, expect, it } from 'vitest';
import { ColloquyError } from '../errors/colloquy-error.js';
import { receiveUntilStored } from './receive-until-stored.js';

const fast = { initialDelayMs: 1, maxDelayMs: 2, jitter: 0 };

describe('receiveUntilStored', () => {
  it('tries again while the store fails, until the message is stored', async () => {
    let tries = 0;
    const retried: number[] = [];
    await receiveUntilStored(
      async () => {
        if (tries++ < 3) throw new ColloquyError('STORE_ERROR', 'The connection to PostgreSQL failed.');
      },
      'hello',
      {
        signal: new AbortController().signal,
        backoff: fast,
        onRetry: (_e, attempt) => retried.push(attempt),
      },
    );
    expect(tries).toBe(4);
    expect(retried).toEqual([0, 1, 2]);
  });

  it('throws a refusal that trying again would not change, at once', async () => {
    let tries = 0;
    const shuttingDown = new ColloquyError('ABORTED', 'The runtime is shutting down.');
    await expect(
      receiveUntilStored(
        async () => {
          tries++;
          throw shuttingDown;
        },
        'hello',
        { signal: new AbortController().signal, backoff: fast },
      ),
    ).rejects.toBe(shuttingDown);
    expect(tries).toBe(1);
  });

  it('gives up with the last refusal once its signal aborts', async () => {
    const stop = new AbortController();
    const down = new ColloquyError('STORE_ERROR', 'The connection to PostgreSQL failed.');
    const tried = receiveUntilStored(
      async () => {
        throw down;
      },
      'hello',
      { signal: stop.signal, backoff: { initialDelayMs: 60_000 } },
    );
    stop.abort();
    await expect(tried).rejects.toBe(down);
  });
});
