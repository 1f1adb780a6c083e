import { searchWords } from '../store/search-text.js';

/**
 * Whether a search query could confirm a guessed configured secret: it contains one of the secrets
 * (case-insensitively), or one of its words is a word of a secret. The stores index configured
 * secrets like any other text (they are not known to a store, unlike the built-in patterns, which
 * are redacted before indexing), so sessions_search answers such a query as one without hits.
 *
 * @param query - the query as given
 * @param secrets - the configured secret values (`configuredSecrets`)
 */
export function queryTouchesSecret(query: string, secrets: readonly string[]): boolean {
  if (secrets.length === 0) return false;
  const folded = fold(query);
  const words = new Set(searchWords(query));
  return secrets.some(
    (secret) =>
      secret !== '' && (folded.includes(fold(secret)) || searchWords(secret).some((word) => words.has(word))),
  );
}

function fold(text: string): string {
  return text.normalize('NFC').toLowerCase();
}
