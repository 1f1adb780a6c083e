import { type ChildProcess, spawn } from 'node:child_process';

/** A Node child process whose stdout is collected as complete lines. */
export interface Child {
  process: ChildProcess;
  /** Complete lines printed so far (a partial last line is not included). */
  lines: string[];
  /** Resolves with the first line matching `pattern` (also one already printed). */
  waitForLine(pattern: RegExp, timeoutMs: number): Promise<string>;
  /** Resolves with the exit code or signal once the process is gone and its output is read. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  stderr(): string;
}

/** Starts `node <script> ...args` with piped stdout/stderr. */
export function startChild(script: string, args: string[]): Child {
  const child = spawn(process.execPath, [script, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  const lines: string[] = [];
  const waiters: { pattern: RegExp; resolve: (line: string) => void }[] = [];
  let partial = '';
  let errors = '';
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (chunk: string) => {
    const parts = (partial + chunk).split('\n');
    partial = parts.pop() ?? '';
    for (const line of parts) {
      lines.push(line);
      for (const waiter of waiters.splice(0)) {
        if (waiter.pattern.test(line)) waiter.resolve(line);
        else waiters.push(waiter);
      }
    }
  });
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (chunk: string) => {
    errors += chunk;
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.on('close', (code, signal) => resolve({ code, signal }));
  });
  return {
    process: child,
    lines,
    exited,
    stderr: () => errors,
    waitForLine(pattern, timeoutMs) {
      const seen = lines.find((line) => pattern.test(line));
      if (seen !== undefined) return Promise.resolve(seen);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`no line matching ${pattern} within ${timeoutMs} ms; stderr: ${errors}`)),
          timeoutMs,
        );
        waiters.push({
          pattern,
          resolve: (line) => {
            clearTimeout(timer);
            resolve(line);
          },
        });
      });
    },
  };
}
