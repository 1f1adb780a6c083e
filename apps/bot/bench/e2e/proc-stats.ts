import { readFileSync } from 'node:fs';

/** Clock ticks per second of /proc/<pid>/stat (USER_HZ; 100 on Linux for every common architecture). */
const TICKS_PER_SECOND = 100;

/**
 * CPU time the process used so far (user + system), in milliseconds, from /proc/<pid>/stat.
 * The resolution is one clock tick (10 ms): measure over many turns.
 *
 * @param pid - the process
 * @returns milliseconds of CPU
 */
export function cpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // The command name (field 2) may hold spaces: count fields after its closing parenthesis.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const utime = Number(fields[11]);
  const stime = Number(fields[12]);
  return ((utime + stime) * 1000) / TICKS_PER_SECOND;
}

/**
 * Resident memory of a process in MB: `VmRSS` now, and `VmHWM`, the peak since it started.
 *
 * @param pid - the process
 * @returns `{ rss, peak }` in MB
 */
export function memoryMb(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (name: string) => Number(new RegExp(`${name}:\\s+(\\d+)\\s+kB`).exec(status)?.[1] ?? Number.NaN);
  return { rss: kb('VmRSS') / 1024, peak: kb('VmHWM') / 1024 };
}
