import type { ColloquyConfig } from '@colloquy/core';
import type { TokenUsage } from '@colloquy/core/model';

/** A usage record with every counter at zero. */
export const ZERO_USAGE: Readonly<TokenUsage> = Object.freeze({
  inputTokens: 0,
  outputTokens: 0,
  totalTokens: 0,
});

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

/**
 * The cost of a usage record from `models.prices["provider/model"]`.
 *
 * @param config - the resolved config
 * @param modelRef - `provider/model`
 * @param usage - the tokens used
 * @returns US dollars, or `undefined` when the model has no price
 */
export function costOf(config: ColloquyConfig, modelRef: string, usage: TokenUsage): number | undefined {
  const price = config.models.prices[modelRef];
  if (!price) return undefined;
  return (
    (usage.inputTokens * price.inputPerMTokUsd + usage.outputTokens * price.outputPerMTokUsd) / 1_000_000
  );
}
