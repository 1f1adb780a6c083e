import { describe, expect, it } from 'vitest';
import { estimateCostUsd, priceForModel } from './estimate-cost.js';

describe('estimateCostUsd', () => {
  it('prices input and output tokens per million', async () => {
    const usage = { inputTokens: 1_200, outputTokens: 300, totalTokens: 1_500 };
    expect(estimateCostUsd(usage, { inputPerMTokUsd: 3, outputPerMTokUsd: 15 })).toBeCloseTo(0.0081, 12);
  });

  it('is undefined when the price is unknown and 0 for no tokens', async () => {
    expect(estimateCostUsd({ inputTokens: 10, outputTokens: 10 }, undefined)).toBeUndefined();
    expect(
      estimateCostUsd({ inputTokens: 0, outputTokens: 0 }, { inputPerMTokUsd: 3, outputPerMTokUsd: 15 }),
    ).toBe(0);
  });

  it('finds prices by provider/model reference', async () => {
    const config = {
      models: { providers: {}, prices: { 'a/m': { inputPerMTokUsd: 1, outputPerMTokUsd: 2 } } },
    };
    expect(priceForModel(config, 'a/m')).toEqual({ inputPerMTokUsd: 1, outputPerMTokUsd: 2 });
    expect(priceForModel(config, 'a/other')).toBeUndefined();
  });
});
