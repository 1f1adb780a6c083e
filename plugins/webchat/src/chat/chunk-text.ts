const FENCE_LINE = /^ {0,3}(`{3,}|~{3,})(.*)$/;

/**
 * Splits a long message into chunks of at most `max` characters, preferring paragraph breaks, then
 * line breaks, then spaces; words are never cut unless one word is longer than `max`. Markdown code
 * fences cut in two are closed at the end of one chunk and reopened (same language) in the next.
 *
 * @param text - the message
 * @param max - the longest chunk (at least 64)
 * @param markdown - keep code fences balanced across chunks (default true)
 * @returns the chunks, in order; `[text]` when it already fits
 */
export function chunkText(text: string, max: number, markdown = true): string[] {
  if (text.length <= max) return [text];
  const chunks: string[] = [];
  let rest = text;
  let reopen = '';
  while (rest.length > 0) {
    const room = max - reopen.length - (markdown ? 8 : 0);
    if (reopen.length + rest.length <= max) {
      chunks.push(reopen + rest);
      break;
    }
    const cut = splitPoint(rest, room);
    let chunk = reopen + rest.slice(0, cut).trimEnd();
    rest = rest.slice(cut).replace(/^\s+/, '');
    reopen = '';
    if (markdown) {
      const open = openFence(chunk);
      if (open) {
        chunk += `\n${open.marker}`;
        reopen = `${open.marker}${open.info}\n`;
      }
    }
    if (chunk.trim().length > 0) chunks.push(chunk);
  }
  return chunks;
}

function splitPoint(text: string, room: number): number {
  const window = text.slice(0, room + 1);
  for (const [separator, minShare] of [
    ['\n\n', 0.5],
    ['\n', 0.5],
    [' ', 0.25],
  ] as const) {
    const at = window.lastIndexOf(separator);
    if (at >= room * minShare && at > 0) return at;
  }
  const code = text.charCodeAt(room - 1);
  return code >= 0xd800 && code <= 0xdbff ? room - 1 : room;
}

/** The code fence still open at the end of `chunk`, if any. */
function openFence(chunk: string): { marker: string; info: string } | undefined {
  let open: { marker: string; info: string } | undefined;
  for (const line of chunk.split('\n')) {
    const match = FENCE_LINE.exec(line);
    if (!match) continue;
    const marker = match[1]!;
    if (!open) open = { marker, info: match[2]!.trim() };
    else if (marker[0] === open.marker[0] && marker.length >= open.marker.length && match[2]!.trim() === '') {
      open = undefined;
    }
  }
  return open;
}
