/**
 * The words of the sub-agent progress line a chat shows while its helpers work, and of the line
 * it becomes when the last one ends. Pure functions of the helpers' states and the time.
 */

/** One helper (a sub-agent the chat's session spawned) as the progress line shows it. */
export interface HelperProgress {
  /** Its label (`sessions_spawn`'s `label`), else a short name. */
  label: string;
  /** `queued` until its run starts; `ok` or `failed` once it ended. */
  state: 'queued' | 'running' | 'ok' | 'failed';
  /** Epoch ms its current run started. */
  startedAt?: number;
}

/** How many helpers are named in the line; the rest are counted. */
const MAX_NAMED = 5;
/** The longest label shown, in characters. */
const MAX_LABEL_CHARS = 40;

/**
 * A duration in words: `40 s`, `1 min 10 s`, `2 min`, `1 h 5 min`.
 *
 * @param ms - milliseconds (negative counts as 0)
 */
export function formatDuration(ms: number): string {
  const seconds = Math.max(0, Math.round(ms / 1000));
  if (seconds < 60) return `${seconds} s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return seconds % 60 === 0 ? `${minutes} min` : `${minutes} min ${seconds % 60} s`;
  const hours = Math.floor(minutes / 60);
  return minutes % 60 === 0 ? `${hours} h` : `${hours} h ${minutes % 60} min`;
}

/**
 * The line while helpers work, e.g. `2 helpers working: research (40 s), summary (queued) · 1 done`.
 *
 * @param helpers - the helpers of this round, oldest spawn first
 * @param now - epoch ms
 */
export function workingLine(helpers: readonly HelperProgress[], now: number): string {
  const active = helpers.filter((h) => h.state === 'queued' || h.state === 'running');
  const named = active.slice(0, MAX_NAMED).map((h) => {
    const when =
      h.state === 'running' && h.startedAt !== undefined ? formatDuration(now - h.startedAt) : 'queued';
    return `${shortLabel(h.label)} (${when})`;
  });
  if (active.length > MAX_NAMED) named.push(`${active.length - MAX_NAMED} more`);
  const ended = endedCounts(helpers);
  return `${helpersWord(active.length)} working: ${named.join(', ')}${ended ? ` · ${ended}` : ''}`;
}

/**
 * The line once every helper ended, e.g. `3 helpers finished in 1 min 10 s (1 failed)`.
 *
 * @param helpers - the helpers of this round
 * @param elapsedMs - from the first spawn to the last end
 */
export function finishedLine(helpers: readonly HelperProgress[], elapsedMs: number): string {
  const failed = helpers.filter((h) => h.state === 'failed').length;
  return `${helpersWord(helpers.length)} finished in ${formatDuration(elapsedMs)}${failed > 0 ? ` (${failed} failed)` : ''}`;
}

function endedCounts(helpers: readonly HelperProgress[]): string {
  const done = helpers.filter((h) => h.state === 'ok').length;
  const failed = helpers.filter((h) => h.state === 'failed').length;
  return [done > 0 ? `${done} done` : '', failed > 0 ? `${failed} failed` : ''].filter(Boolean).join(', ');
}

function helpersWord(count: number): string {
  return `${count} ${count === 1 ? 'helper' : 'helpers'}`;
}

function shortLabel(label: string): string {
  const flat = label.replace(/\s+/g, ' ').trim() || 'helper';
  return flat.length > MAX_LABEL_CHARS ? `${flat.slice(0, MAX_LABEL_CHARS - 1)}…` : flat;
}
