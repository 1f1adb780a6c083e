import type { TokenUsage } from '@colloquy/core/model';
import type { ModelPrice, ModelsConfigView } from './provider-config.js';

/**
 * Estimates the cost of a turn or run in US dollars from its token usage.
 *
 * @param usage - input and output token counts
 * @param price - the model's prices per million tokens; absent means unknown
 * @returns the cost in USD (rounded to 1e-9), or `undefined` when the price is unknown
 * @example
 * ```ts
 * estimateCostUsd({ inputTokens: 1200, outputTokens: 300, totalTokens: 1500 }, { inputPerMTokUsd: 3, outputPerMTokUsd: 15 });
 * // 0.0081
 * ```
 */
export function estimateCostUsd(
  usage: Pick<TokenUsage, 'inputTokens' | 'outputTokens'>,
  price: ModelPrice | undefined,
): number | undefined {
  if (!price) return undefined;
  const raw =
    (usage.inputTokens * price.inputPerMTokUsd + usage.outputTokens * price.outputPerMTokUsd) / 1_000_000;
  return Math.round(raw * 1e9) / 1e9;
}

/**
 * Looks up a model's price in `config.models.prices` by its `provider/model` reference.
 *
 * @returns the price, or `undefined` when none is configured
 */
export function priceForModel(config: ModelsConfigView, ref: string): ModelPrice | undefined {
  return config.models.prices?.[ref];
}
