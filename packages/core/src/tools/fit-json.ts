import { utf8ByteLength } from '../history/index.js';

// Sizes of the pretty JSON (`JSON.stringify(value, null, 2)`) a tool result is written as, so that
// parts of a result can be measured once and added up instead of writing the whole result again.

/** UTF-8 bytes of a tool result as the model reads it (the pretty JSON `toolResult` writes). */
export function jsonBytes(value: unknown): number {
  return utf8ByteLength(JSON.stringify(value, null, 2));
}

/**
 * UTF-8 bytes `value` takes inside a larger pretty JSON where it sits `depth` levels deep (the
 * result itself is level 0, its fields' values level 1, and so on): its own pretty JSON with every
 * line after the first indented by `2 * depth` more spaces.
 */
export function nestedJsonBytes(value: unknown, depth: number): number {
  const text = JSON.stringify(value, null, 2);
  let newlines = 0;
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) newlines += 1;
  return utf8ByteLength(text) + 2 * depth * newlines;
}

/**
 * UTF-8 bytes of a pretty JSON array `depth` levels deep, from the `nestedJsonBytes` of its items
 * (each at `depth + 1`): `[]` when empty, else each item on its own indented line, comma-separated.
 */
export function arrayJsonBytes(itemBytes: readonly number[], depth: number): number {
  if (itemBytes.length === 0) return 2;
  let total = 2 + 2 * depth;
  for (const bytes of itemBytes) total += bytes + 2 * (depth + 1) + 2;
  return total;
}
