import { utf8ByteLength } from '../history/index.js';

/** UTF-8 bytes of a tool result as the model reads it (the pretty JSON `toolResult` writes). */
export function jsonBytes(value: unknown): number {
  return utf8ByteLength(JSON.stringify(value, null, 2));
}

/**
 * The largest `k` in `[0, n]` for which `fits(k)` holds, by binary search: `fits` must hold for
 * every `k` below one that holds (a shorter prefix is never larger). 0 when none fits.
 */
export function largestFitting(n: number, fits: (k: number) => boolean): number {
  let lo = 0;
  let hi = n;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (fits(mid)) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}
