import { arrayJsonBytes, nestedJsonBytes } from './fit-json.js';

/** A row that may carry messages, oldest first (a sessions_list row). */
export interface RowWithMessages {
  /** The row's messages, oldest first. */
  messages?: readonly unknown[];
  /** How many of its oldest messages were already left out; `fitRows` adds those it leaves out. */
  messagesTrimmed?: number;
}

/** The rows `fitRows` keeps, and what it left out. */
export interface FittedRows<R> {
  /** The rows shown, in their order; a row whose oldest messages were left out carries `messagesTrimmed`. */
  rows: R[];
  /** How many of the given rows, from the first, these account for: shown, or skipped. */
  consumed: number;
  /** Rows skipped because not even the row without messages fits in the whole budget. */
  skipped: number;
}

/**
 * Fits rows into the pretty JSON array that holds them, `depth` levels deep, within `budget` UTF-8
 * bytes. Rows are taken in order: whole when they fit, else without their oldest messages, as few
 * left out as makes the row fit. The first row that does not fit even without messages ends the
 * rows taken, unless no row is taken yet: then it can never fit, and it is skipped. So some row is
 * accounted for whenever any is given, and paging on after `consumed` rows always moves forward.
 *
 * @param rows - the rows, in the order they are shown
 * @param budget - the most UTF-8 bytes of the array (`arrayJsonBytes` of the shown rows)
 * @param depth - how deep the array sits in the result (see `nestedJsonBytes`)
 * @returns the rows shown, and how many were consumed and skipped
 */
export function fitRows<R extends RowWithMessages>(
  rows: readonly R[],
  budget: number,
  depth: number,
): FittedRows<R> {
  const fitted: FittedRows<R> = { rows: [], consumed: 0, skipped: 0 };
  const sizes: number[] = [];
  for (const row of rows) {
    const room = budget - arrayJsonBytes([...sizes, 0], depth);
    const shown = fitRow(row, room, depth + 1);
    if (shown) {
      fitted.rows.push(shown.row);
      sizes.push(shown.bytes);
    } else if (fitted.rows.length === 0) {
      fitted.skipped += 1;
    } else {
      break;
    }
    fitted.consumed += 1;
  }
  return fitted;
}

/**
 * The row, or the row with the fewest of its oldest messages left out, whose JSON at `depth` takes
 * at most `room` bytes; undefined when not even the row without messages fits.
 */
function fitRow<R extends RowWithMessages>(
  row: R,
  room: number,
  depth: number,
): { row: R; bytes: number } | undefined {
  const whole = nestedJsonBytes(row, depth);
  if (whole <= room) return { row, bytes: whole };
  const messages = row.messages ?? [];
  // The row's fields sit one level below it, the messages array's items one more.
  const sizes = messages.map((message) => nestedJsonBytes(message, depth + 2));
  for (let left = 1; left <= messages.length; left++) {
    const messagesTrimmed = (row.messagesTrimmed ?? 0) + left;
    const bytesWithout = nestedJsonBytes({ ...row, messages: [], messagesTrimmed }, depth);
    // Replace the empty array's `[]` with the kept messages.
    const bytes = bytesWithout - 2 + arrayJsonBytes(sizes.slice(left), depth + 1);
    if (bytes <= room) return { row: { ...row, messages: messages.slice(left), messagesTrimmed }, bytes };
  }
  return undefined;
}
