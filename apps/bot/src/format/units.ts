/**
 * Human-readable units for command replies and CLI output.
 */

/**
 * How long ago `at` was, in the largest whole unit: `just now`, `42s ago`, `5m ago`, `3h ago`, `2d ago`.
 *
 * @param at - epoch ms
 * @param now - epoch ms
 * @returns the phrase
 */
export function timeAgo(at: number, now: number): string {
  const seconds = Math.max(0, Math.round((now - at) / 1000));
  if (seconds < 5) return 'just now';
  if (seconds < 60) return `${seconds}s ago`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes}m ago`;
  const hours = Math.floor(minutes / 60);
  if (hours < 48) return `${hours}h ago`;
  return `${Math.floor(hours / 24)}d ago`;
}

/**
 * A duration: `850ms`, `12.3s`, `4m 05s`, `2h 10m`.
 *
 * @param ms - milliseconds
 * @returns the duration
 */
export function duration(ms: number): string {
  if (ms < 1000) return `${Math.max(0, Math.round(ms))}ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)}s`;
  const totalSeconds = Math.round(ms / 1000);
  const minutes = Math.floor(totalSeconds / 60);
  if (minutes < 60) return `${minutes}m ${String(totalSeconds % 60).padStart(2, '0')}s`;
  return `${Math.floor(minutes / 60)}h ${String(minutes % 60).padStart(2, '0')}m`;
}

/**
 * A count with a k/M suffix: `950`, `1.2k`, `3.4M`.
 *
 * @param n - the count
 * @returns the short form
 */
export function compactCount(n: number): string {
  if (n < 1000) return String(n);
  if (n < 1_000_000) return `${(n / 1000).toFixed(n < 10_000 ? 1 : 0)}k`;
  return `${(n / 1_000_000).toFixed(1)}M`;
}

/**
 * Cuts text to `max` characters on one line (newlines become spaces), with `…` when cut.
 *
 * @param text - any text
 * @param max - the most characters kept
 * @returns the line
 */
export function oneLine(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length <= max ? flat : `${flat.slice(0, Math.max(0, max - 1))}…`;
}
