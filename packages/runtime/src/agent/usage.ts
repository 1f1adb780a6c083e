import type { ColloquyConfig } from '@colloquy/core';
import type { TokenUsage } from '@colloquy/core/gateway';

/** A usage record with every counter at zero. */
export const ZERO_USAGE: Readonly<TokenUsage> = Object.freeze({
  inputTokens: 0,
  outputTokens: 0,
  totalTokens: 0,
});

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
