/**
 * Splits Discord markdown into messages of at most `limit` characters.
 *
 * Breaks fall, in order of preference, on paragraph boundaries, before a code block, on line
 * boundaries outside code, on line boundaries inside code, and only then inside a long line (at
 * whitespace outside inline markup where possible). A code fence cut across messages is closed at
 * the end of one chunk and reopened, with its language, at the start of the next.
 */

/** Discord's limit for the `content` of one message. */
export const DISCORD_MESSAGE_LIMIT = 2000;

interface Fence {
  /** The line that reopens the fence in a following chunk (marker + language). */
  open: string;
  /** The line that closes it. */
  close: string;
  char: '`' | '~';
  size: number;
}

interface Item {
  text: string;
  /** What joins this item to the previous one: a newline, or nothing for a piece of a split line. */
  glue: '\n' | '';
  /** The fence open before this item. */
  fenceBefore: Fence | undefined;
  /** The fence open after this item. */
  fenceAfter: Fence | undefined;
  /** A whitespace-only line outside code. */
  blank: boolean;
  /** This item's line opens a fence. */
  opensFence: boolean;
}

const OPEN_FENCE = /^ {0,3}(`{3,}|~{3,})([^\n]*)$/;
const CLOSE_FENCE = /^ {0,3}(`{3,}|~{3,})[ \t]*$/;

/**
 * Splits markdown into chunks of at most `limit` characters, keeping code blocks valid.
 *
 * @param text - model markdown (Discord dialect)
 * @param limit - maximum characters per chunk (default 2000, Discord's limit); at least 16
 * @returns the chunks in order; none is empty or whitespace-only; `[]` for blank text
 * @example
 * ```ts
 * for (const content of chunkDiscordMarkdown(reply)) await channel.send({ content });
 * ```
 */
export function chunkDiscordMarkdown(text: string, limit: number = DISCORD_MESSAGE_LIMIT): string[] {
  if (!Number.isInteger(limit) || limit < 16)
    throw new RangeError(`limit must be an integer >= 16, got ${limit}`);
  const normalized = text.replace(/\r\n?/g, '\n');
  if (normalized.trim() === '') return [];
  if (normalized.length <= limit) return [trimChunk(normalized)];
  const items = toItems(normalized, limit);
  return pack(items, limit);
}

// --- line items with fence state ---

function toItems(text: string, limit: number): Item[] {
  const items: Item[] = [];
  let fence: Fence | undefined;
  const lines = text.split('\n');
  lines.forEach((line, index) => {
    const before = fence;
    let opensFence = false;
    if (before === undefined) {
      const opened = parseOpenFence(line, limit);
      if (opened !== undefined) {
        fence = opened;
        opensFence = true;
      }
    } else if (closesFence(line, before)) {
      fence = undefined;
    }
    const glue = index === 0 ? '' : '\n';
    const blank = before === undefined && !opensFence && line.trim() === '';
    const capacity = limit - overhead(before);
    if (line.length <= capacity) {
      items.push({ text: line, glue, fenceBefore: before, fenceAfter: fence, blank, opensFence });
      return;
    }
    // Only ordinary lines get here: fence lines are far shorter than the capacity.
    const pieces = splitLongLine(line, capacity, before === undefined);
    pieces.forEach((piece, i) => {
      items.push({
        text: piece,
        glue: i === 0 ? glue : '',
        fenceBefore: before,
        fenceAfter: before,
        blank: false,
        opensFence: false,
      });
    });
  });
  return items;
}

function parseOpenFence(line: string, limit: number): Fence | undefined {
  const match = OPEN_FENCE.exec(line);
  if (match === null) return undefined;
  const marker = match[1]!;
  const char = marker[0] as '`' | '~';
  const info = match[2]!.trim();
  if (char === '`' && info.includes('`')) return undefined;
  const language = info.split(/\s+/)[0] ?? '';
  const fence: Fence = { open: `${marker}${language}`, close: marker, char, size: marker.length };
  // A fence too big to repeat in every chunk is treated as text (it cannot be repaired anyway).
  if (overhead(fence) > limit / 4) return undefined;
  return fence;
}

function closesFence(line: string, fence: Fence): boolean {
  const match = CLOSE_FENCE.exec(line);
  if (match === null) return false;
  const marker = match[1]!;
  return marker[0] === fence.char && marker.length >= fence.size;
}

/** Characters a chunk spends reopening and closing a fence it cuts. */
function overhead(fence: Fence | undefined): number {
  return fence === undefined ? 0 : fence.open.length + 1 + fence.close.length + 1;
}

// --- packing items into chunks ---

function pack(items: Item[], limit: number): string[] {
  // cumulative[i] = characters of items[0..i) including their glue.
  const cumulative = [0];
  for (const item of items) cumulative.push(cumulative.at(-1)! + item.glue.length + item.text.length);
  const size = (a: number, b: number): number =>
    reopenLength(items[a]!.fenceBefore) +
    cumulative[b]! -
    cumulative[a]! -
    items[a]!.glue.length +
    closeLength(items[b - 1]!.fenceAfter);

  const chunks: string[] = [];
  let start = 0;
  while (start < items.length) {
    let end = start + 1;
    while (end < items.length && fits(size, start, end + 1, limit)) end += 1;
    if (end < items.length) end = chooseBreak(items, size, start, end, limit);
    // A cut right after a fence opener (and blank lines) would send an empty code block: skip it,
    // the next chunk reopens the fence anyway.
    if (!isEmptyFencePrefix(items, start, end)) {
      const chunk = trimChunk(render(items, start, end, end === items.length));
      if (chunk.trim() !== '') chunks.push(chunk);
    }
    start = end;
    while (start < items.length && items[start]!.blank) start += 1;
  }
  return chunks;
}

function fits(size: (a: number, b: number) => number, a: number, b: number, limit: number): boolean {
  return size(a, b) <= limit;
}

function reopenLength(fence: Fence | undefined): number {
  return fence === undefined ? 0 : fence.open.length + 1;
}

function closeLength(fence: Fence | undefined): number {
  return fence === undefined ? 0 : fence.close.length + 1;
}

/**
 * Picks where to end the chunk that starts at `start`, at most at `end`. Prefers strong boundaries
 * as long as the chunk stays at least half full.
 */
function chooseBreak(
  items: Item[],
  size: (a: number, b: number) => number,
  start: number,
  end: number,
  limit: number,
): number {
  let best = end;
  let bestScore = breakScore(items, end);
  for (let j = end - 1; j > start; j -= 1) {
    if (size(start, j) < limit / 2) break;
    const score = breakScore(items, j);
    if (score > bestScore) {
      best = j;
      bestScore = score;
    }
  }
  return best;
}

/** How good a break before `items[j]` is: higher is better. */
function breakScore(items: Item[], j: number): number {
  const previous = items[j - 1]!;
  const next = items[j]!;
  if (next.glue === '') return 0;
  if (previous.opensFence) return -1;
  const outside = previous.fenceAfter === undefined;
  if (outside && (previous.blank || next.blank || next.opensFence)) return 4;
  if (outside) return 3;
  return 1;
}

function isEmptyFencePrefix(items: Item[], start: number, end: number): boolean {
  if (end === items.length || items[end - 1]!.fenceAfter === undefined) return false;
  for (let i = start; i < end; i += 1) {
    const item = items[i]!;
    if (!item.opensFence && item.text.trim() !== '') return false;
  }
  return true;
}

/** Renders items [start, end); a fence left open at the very end of the text stays open. */
function render(items: Item[], start: number, end: number, atEnd: boolean): string {
  const first = items[start]!;
  const last = items[end - 1]!;
  let out = first.fenceBefore === undefined ? '' : `${first.fenceBefore.open}\n`;
  out += first.text;
  for (let i = start + 1; i < end; i += 1) out += items[i]!.glue + items[i]!.text;
  if (last.fenceAfter !== undefined && !atEnd) out += `\n${last.fenceAfter.close}`;
  return out;
}

/** Drops blank lines at both ends (never indentation of the first line). */
function trimChunk(chunk: string): string {
  return chunk.replace(/^(?:[ \t]*\n)+/, '').replace(/(?:\n[ \t]*)+$/, '');
}

// --- splitting one long line ---

const INLINE_SPANS = [
  /(`+)[^`]+?\1/g, // inline code
  /\*\*[^*\n]+?\*\*/g, // bold
  /__[^_\n]+?__/g, // underline
  /~~[^~\n]+?~~/g, // strikethrough
  /\|\|[^|\n]+?\|\|/g, // spoiler
  /(?<![*\w])\*[^*\s](?:[^*\n]*[^*\s])?\*(?!\*)/g, // italic
  /\[[^\]\n]*\]\([^)\s]*\)/g, // link
  /<[a-z]+:\/\/[^>\s]+>/gi, // suppressed-embed link
  /https?:\/\/\S+/gi, // bare URL
  /<(?:@[!&]?|#|a?:\w+:|t:)\d+(?::\w)?>/g, // mentions, channels, emoji, timestamps
];

/**
 * Splits a line into pieces of at most `capacity` characters. Cuts after whitespace, outside
 * inline markup when `markup` is true, and never between the halves of a surrogate pair.
 */
export function splitLongLine(line: string, capacity: number, markup: boolean): string[] {
  const pieces: string[] = [];
  let rest = line;
  while (rest.length > capacity) {
    const cut = chooseCut(rest, capacity, markup);
    pieces.push(rest.slice(0, cut));
    rest = rest.slice(cut);
  }
  if (rest.length > 0) pieces.push(rest);
  return pieces;
}

function chooseCut(text: string, capacity: number, markup: boolean): number {
  const spans = markup ? protectedSpans(text, capacity) : [];
  const inside = (i: number): boolean => spans.some(([a, b]) => a < i && i < b);
  let fallback = 0;
  for (let i = capacity; i > 0; i -= 1) {
    if (splitsSurrogate(text, i) || inside(i)) continue;
    if (/\s/.test(text[i - 1]!)) return i;
    if (fallback === 0 && i >= capacity / 2) fallback = i;
  }
  if (fallback > 0) return fallback;
  return splitsSurrogate(text, capacity) ? capacity - 1 : capacity;
}

function protectedSpans(text: string, capacity: number): [number, number][] {
  const spans: [number, number][] = [];
  for (const pattern of INLINE_SPANS) {
    for (const match of text.matchAll(pattern)) {
      const length = match[0].length;
      // A span longer than half a message cannot be kept whole without a very short chunk.
      if (length <= capacity / 2) spans.push([match.index, match.index + length]);
    }
  }
  return spans;
}

function splitsSurrogate(text: string, i: number): boolean {
  const code = text.charCodeAt(i - 1);
  return code >= 0xd800 && code <= 0xdbff;
}
