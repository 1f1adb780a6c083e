/**
 * True when a room message addresses the assistant: `@bot`, `@<assistant name>` (spaces optional,
 * any case), or a slash command. Direct chats are always addressed and do not call this.
 *
 * @param text - the message text
 * @param assistantName - the assistant's display name
 */
export function mentionsAssistant(text: string, assistantName: string): boolean {
  const trimmed = text.trimStart();
  if (trimmed.startsWith('/')) return true;
  const handles = new Set(['bot', assistantName.toLowerCase().replace(/\s+/g, '')]);
  for (const match of text.matchAll(/(?:^|[^\p{L}\p{N}_@])@([\p{L}\p{N}_-]+)/gu)) {
    if (handles.has((match[1] ?? '').toLowerCase())) return true;
  }
  return false;
}

const ROOM = /^[a-z0-9][a-z0-9-]{0,47}$/;

/**
 * Normalises a `?room=` value: lower-cased and trimmed; 1 to 48 of `a-z`, `0-9` and `-`, starting
 * with a letter or digit. Room names never contain `_`, so they never collide with visitor ids.
 *
 * @returns the room name, or `undefined` when it is not acceptable
 */
export function normalizeRoomName(raw: string): string | undefined {
  const room = raw.trim().toLowerCase();
  return ROOM.test(room) ? room : undefined;
}
