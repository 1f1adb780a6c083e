/** A progress indicator for a long CLI wait. */
export interface Progress {
  /** Stops the indicator and clears its line (terminal) . Idempotent. */
  stop(): void;
}

const FRAMES = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

/**
 * Shows that the CLI is waiting: a spinner with the elapsed time in a terminal, or, when the output
 * is not a terminal, one line at the start and a "still waiting" line every `lineEveryMs`.
 *
 * @param label - what is awaited, e.g. `waiting for the reply`
 * @param stream - where to draw (stderr, so stdout stays clean for the result)
 * @param options - the interval of progress lines when not a terminal (default 10000 ms)
 * @returns a handle to stop it
 */
export function startProgress(
  label: string,
  stream: NodeJS.WritableStream & { isTTY?: boolean } = process.stderr,
  options: { lineEveryMs?: number } = {},
): Progress {
  const started = Date.now();
  const elapsed = () => `${Math.floor((Date.now() - started) / 1000)}s`;
  let stopped = false;
  let timer: NodeJS.Timeout;
  if (stream.isTTY) {
    let frame = 0;
    const draw = () => stream.write(`\r${FRAMES[frame++ % FRAMES.length]} ${label} ${elapsed()}\u001b[K`);
    draw();
    timer = setInterval(draw, 100);
  } else {
    stream.write(`${label}...\n`);
    timer = setInterval(() => stream.write(`still ${label} (${elapsed()})\n`), options.lineEveryMs ?? 10_000);
  }
  timer.unref();
  return {
    stop() {
      if (stopped) return;
      stopped = true;
      clearInterval(timer);
      if (stream.isTTY) stream.write('\r\u001b[K');
    },
  };
}
