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
  /**
   * Under `agent` and `all`, `sessions_list` and `sessions_search` look only at the agents in
   * scope, so they leave out the caller's descendants of other agents, which the guard lets it read
   * (`sessions_history` on them works), and count them in `filtered.hidden` where countable; a
   * listed session's `childSessions` leaves them out too when its parent is not the caller.
   */
  listingsMissDescendantsOfOtherAgents: true,
} as const;
