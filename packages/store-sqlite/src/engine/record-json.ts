/** Parses a stored JSON record, or returns `undefined` when there was no row. */
export function parseOptional<T>(json: string | undefined): T | undefined {
  return json === undefined ? undefined : (JSON.parse(json) as T);
}

/** The fields of a patch that are set (an `undefined` field leaves the stored one alone). */
export function withoutUndefined<T extends object>(value: T): Partial<T> {
  // A loop, not entries/filter/fromEntries: this runs for every outbox update.
  const set: Record<string, unknown> = {};
  for (const [field, fieldValue] of Object.entries(value)) {
    if (fieldValue !== undefined) set[field] = fieldValue;
  }
  return set as Partial<T>;
}
