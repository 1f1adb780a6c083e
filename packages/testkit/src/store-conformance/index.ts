// @colloquy/testkit/store-conformance: the Store conformance suite (vitest). Every Store
// implementation runs it unchanged; each case file registers its cases with fresh-store hooks.

import type { Store } from '@colloquy/core/store';
import { describe } from 'vitest';
import { describeMcpTokenCases } from './mcp-token-cases.js';
import { describeSearchCases } from './search-cases.js';
import { describeStoreCases, type StoreConformanceOptions } from './store-cases.js';
import { describeTreeCases } from './tree-cases.js';
import { describeTurnCases } from './turn-cases.js';
import { describeWatchCases } from './watch-cases.js';

export type { StoreConformanceOptions } from './store-cases.js';

/** The case files of the suite, run in this order; a new file adds one line here. */
const CASE_FILES: ReadonlyArray<
  (makeStore: () => Store | Promise<Store>, options: StoreConformanceOptions) => void
> = [
  describeStoreCases,
  describeSearchCases,
  describeWatchCases,
  describeMcpTokenCases,
  describeTurnCases,
  describeTreeCases,
];

/**
 * The Store conformance suite: every Store implementation runs it unchanged, inside vitest. Each test
 * gets a fresh store from `makeStore`, closed (after `options.cleanup`) when the test ends.
 *
 * @param name - a label for the describe block
 * @param makeStore - returns a fresh, empty store for each test
 * @param options - `cleanup(store)` after each test (remove temp files, drop databases)
 * @example
 * ```ts
 * import { runStoreConformance } from '@colloquy/testkit/store-conformance';
 * runStoreConformance('SqliteStore', () => openSqliteStore({ file: tempFile() }));
 * ```
 */
export function runStoreConformance(
  name: string,
  makeStore: () => Store | Promise<Store>,
  options: StoreConformanceOptions = {},
): void {
  describe(`Store conformance: ${name}`, () => {
    for (const describeCases of CASE_FILES) describeCases(makeStore, options);
  });
}
