import { randomFillSync } from 'node:crypto';
import { INVALID_SPANID, INVALID_TRACEID } from '@opentelemetry/api';

const POOL_BYTES = 4096;

/**
 * Random trace and span ids, in lower-case hex, cut from a pool of random bytes filled 4 KiB at a
 * time (one `randomFillSync` per 256 span ids, instead of one per id).
 */
export class SpanIds {
  private readonly pool = Buffer.alloc(POOL_BYTES);
  private used = POOL_BYTES;

  /** A 16-byte trace id, never all zeros. */
  traceId(): string {
    return this.nonZero(16);
  }

  /** An 8-byte span id, never all zeros. */
  spanId(): string {
    return this.nonZero(8);
  }

  private nonZero(bytes: number): string {
    for (;;) {
      if (this.used + bytes > POOL_BYTES) {
        randomFillSync(this.pool);
        this.used = 0;
      }
      const id = this.pool.toString('hex', this.used, this.used + bytes);
      this.used += bytes;
      // An all-zero id is the API's invalid one; with 64 random bits it is drawn about never.
      if (id !== INVALID_TRACEID && id !== INVALID_SPANID) return id;
    }
  }
}
