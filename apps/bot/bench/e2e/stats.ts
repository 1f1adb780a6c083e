/** The value at quantile `q` (0..1) of a list (nearest rank), or NaN for an empty list. */
export function quantile(values: readonly number[], q: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[rank]!;
}

/** The median of a list, with its minimum and maximum. */
export interface Spread {
  median: number;
  min: number;
  max: number;
}

/** Median, min and max of the runs of one figure. */
export function spread(values: readonly number[]): Spread {
  return {
    median: quantile(values, 0.5),
    min: Math.min(...values),
    max: Math.max(...values),
  };
}
