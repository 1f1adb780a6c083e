const FENCE = '```';

const countFences = (text: string): number => text.split(FENCE).length - 1;

/**
 * Splits text into messages of at most `limit` characters for readability. It cuts at a paragraph
 * break, else a line break, else after a sentence, else at a space, and only as a last resort inside
 * a word (never inside a surrogate pair). A monospace block cut in two is closed at the end of one
 * message and reopened at the start of the next.
 *
 * @param text - converted text
 * @param limit - the most characters in one message (at least 16)
 * @returns the chunks, in order; `[]` for empty text
 */
export function chunkText(text: string, limit: number): string[] {
  const max = Math.max(16, Math.floor(limit));
  const chunks: string[] = [];
  let rest = text.trim() === '' ? '' : text.replace(/^\s*\n/, '').trimEnd();
  let inFence = false;
  while (rest.length > 0) {
    const prefix = inFence ? `${FENCE}\n` : '';
    if (prefix.length + rest.length <= max) {
      chunks.push(prefix + rest);
      break;
    }
    // Reserve room for a closing fence in case the cut lands inside a block.
    const budget = max - prefix.length - (FENCE.length + 1);
    const cut = findCut(rest, budget);
    const piece = rest.slice(0, cut).trimEnd();
    const open: boolean = (countFences(piece) % 2 === 1) !== inFence;
    chunks.push(open ? `${prefix}${piece}\n${FENCE}` : prefix + piece);
    rest = rest.slice(cut);
    rest = open ? rest.replace(/^[ \t]*\n/, '') : rest.trimStart();
    inFence = open;
  }
  return chunks.filter((c) => c.trim() !== '' && c !== `${FENCE}\n${FENCE}`);
}

function findCut(text: string, budget: number): number {
  const window = text.slice(0, budget + 1);
  const floor = Math.floor(budget * 0.5);
  const paragraph = window.lastIndexOf('\n\n');
  if (paragraph >= floor) return paragraph;
  const line = window.lastIndexOf('\n');
  if (line >= floor) return line;
  let sentence = -1;
  for (const m of window.matchAll(/[.!?…][)"'\]]?(?=\s)/g)) {
    const end = m.index + m[0].length;
    if (end <= budget) sentence = end;
  }
  if (sentence >= floor) return sentence;
  const space = Math.max(window.lastIndexOf(' '), window.lastIndexOf('\t'));
  if (space >= floor) return space;
  const code = text.charCodeAt(budget - 1);
  return code >= 0xd800 && code <= 0xdbff ? budget - 1 : budget;
}
