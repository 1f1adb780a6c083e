import { randomBytes } from 'node:crypto';
import { INVALID_SPANID, INVALID_TRACEID } from '@opentelemetry/api';

/** Random bytes drawn at a time: 256 span ids. */
const POOL_BYTES = 4096;

/**
 * Random trace and span ids, in lower-case hex, cut from a pool of random bytes drawn and written
 * out in hex 4 KiB at a time: one `randomBytes` and one hex conversion per 256 span ids, and each
 * id a slice of that text (which V8 keeps as a view of it, without copying).
 */
export class SpanIds {
  private hex = '';
  /** Hex digits of {@link hex} already handed out. */
  private used = 0;

  /** A 16-byte trace id, never all zeros. */
  traceId(): string {
    return this.nonZero(32);
  }

  /** An 8-byte span id, never all zeros. */
  spanId(): string {
    return this.nonZero(16);
  }

  private nonZero(digits: number): string {
    for (;;) {
      if (this.used + digits > this.hex.length) {
        this.hex = randomBytes(POOL_BYTES).toString('hex');
        this.used = 0;
      }
      const id = this.hex.slice(this.used, this.used + digits);
      this.used += digits;
      // An all-zero id is the API's invalid one; with 64 random bits it is drawn about never.
      if (id !== INVALID_TRACEID && id !== INVALID_SPANID) return id;
    }
  }
}
