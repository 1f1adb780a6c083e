/**
 * Behaviour the differential suite found at odds with the visibility model and that is not settled
 * yet. Each entry has an `it.fails` case in `differential-findings.test.ts` that reproduces it from
 * a shrunk sequence; while an entry is `true`, the model tolerates exactly that behaviour and
 * nothing more. Once it is fixed, its `it.fails` case fails: set the entry to `false` (then delete
 * it) and turn the case into a plain test.
 */
export const KNOWN_DISCREPANCIES = {
  /**
   * Under `agent` and `all`, `filtered.hidden` subtracts the forked sessions the guard refuses only
   * when they fall on the page, so a page that does not cover the scope counts fewer.
   */
  hiddenCountMissesForksOffThePage: true,
} as const;
