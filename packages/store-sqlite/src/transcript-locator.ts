import { ColloquyError } from '@colloquy/core';

const PREFIX = 'sqlite:';

/**
 * The locator of a session's transcript inside a store file: `sqlite:<file>#<sessionId>`. A store
 * names its file relative to its directory (`sqlite:colloquy.db#...`), so a locator shown to a model
 * or a chat never reveals a server path; {@link parseTranscriptLocator} turns it back into the file
 * and the session.
 *
 * @param file - the store file (as `SqliteStore.file` reports it)
 * @param sessionId - the session's `sessionId`
 * @returns the locator string
 * @example
 * ```ts
 * formatTranscriptLocator('colloquy.db', '6f1c...'); // 'sqlite:colloquy.db#6f1c...'
 * ```
 */
export function formatTranscriptLocator(file: string, sessionId: string): string {
  return `${PREFIX}${file}#${sessionId}`;
}

/**
 * Splits a locator made by {@link formatTranscriptLocator} into its file and session id. The
 * session id is what follows the last `#`, so files whose path holds a `#` still parse.
 *
 * @param locator - e.g. `sqlite:/data/store.db#6f1c...`
 * @returns `{ file, sessionId }`
 * @throws `INVALID_ARGUMENT` when `locator` is not a `sqlite:` locator
 */
export function parseTranscriptLocator(locator: string): { file: string; sessionId: string } {
  const hash = locator.lastIndexOf('#');
  if (!locator.startsWith(PREFIX) || hash <= PREFIX.length || hash === locator.length - 1) {
    throw new ColloquyError(
      'INVALID_ARGUMENT',
      `"${locator}" is not a transcript locator; expected sqlite:<file>#<sessionId> as returned by transcriptLocator().`,
      { locator },
    );
  }
  return { file: locator.slice(PREFIX.length, hash), sessionId: locator.slice(hash + 1) };
}

/** True when `value` looks like a `sqlite:` transcript locator. */
export function isTranscriptLocator(value: string): boolean {
  return value.startsWith(PREFIX) && value.includes('#');
}
