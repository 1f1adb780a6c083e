import type { TokenUsage } from '../interfaces/records.js';

/**
 * Adds two usage records. `contextTokens` is not a sum: the newer record's value wins.
 *
 * @param a - the running total (may be undefined)
 * @param b - the usage to add
 * @returns a new record
 */
export function addUsage(a: TokenUsage | undefined, b: TokenUsage): TokenUsage {
  const sum: TokenUsage = {
    inputTokens: (a?.inputTokens ?? 0) + b.inputTokens,
    outputTokens: (a?.outputTokens ?? 0) + b.outputTokens,
    totalTokens: (a?.totalTokens ?? 0) + (b.totalTokens || b.inputTokens + b.outputTokens),
  };
  const context = b.contextTokens ?? a?.contextTokens;
  if (context !== undefined) sum.contextTokens = context;
  return sum;
}
