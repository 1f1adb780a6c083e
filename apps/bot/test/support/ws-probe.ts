import WebSocket from 'ws';

/** A raw WebSocket that records every JSON frame and the close code, for probing servers. */
export interface WsProbe {
  socket: WebSocket;
  frames: Record<string, unknown>[];
  closeCode(): number | undefined;
  send(data: string | Buffer): void;
  /** Resolves with the first recorded frame (from index `from`) matching `match`. */
  next(
    match: (frame: Record<string, unknown>) => boolean,
    timeoutMs?: number,
  ): Promise<Record<string, unknown>>;
  /** Resolves with the close code. */
  closed(timeoutMs?: number): Promise<number>;
  close(): void;
}

/**
 * Opens a WebSocket; rejects with `HTTP <status>` when the upgrade is refused.
 *
 * @param url - `ws://...`
 * @param headers - extra request headers (Origin, Authorization, Cookie)
 */
export async function openProbe(url: string, headers: Record<string, string> = {}): Promise<WsProbe> {
  const socket = new WebSocket(url, { headers, maxPayload: 8 * 1024 * 1024 });
  const frames: Record<string, unknown>[] = [];
  let code: number | undefined;
  const wakers = new Set<() => void>();
  const wake = () => {
    for (const w of wakers) w();
  };
  socket.on('message', (data) => {
    try {
      frames.push(JSON.parse(String(data)) as Record<string, unknown>);
    } catch {
      frames.push({ unparsed: String(data) });
    }
    wake();
  });
  socket.on('close', (c) => {
    code = c;
    wake();
  });
  socket.on('error', () => undefined);
  await new Promise<void>((resolve, reject) => {
    socket.once('open', () => resolve());
    socket.once('unexpected-response', (_req, res) => reject(new Error(`HTTP ${res.statusCode}`)));
    socket.once('error', reject);
  });
  const waitFor = <T>(check: () => T | undefined, timeoutMs: number, what: string): Promise<T> =>
    new Promise((resolve, reject) => {
      const run = () => {
        const value = check();
        if (value === undefined) return false;
        clearTimeout(timer);
        wakers.delete(tick);
        resolve(value);
        return true;
      };
      const tick = () => void run();
      const timer = setTimeout(() => {
        wakers.delete(tick);
        reject(new Error(`${what} within ${timeoutMs} ms; frames: ${JSON.stringify(frames).slice(0, 2000)}`));
      }, timeoutMs);
      if (!run()) wakers.add(tick);
    });
  return {
    socket,
    frames,
    closeCode: () => code,
    send: (data) => socket.send(data),
    next: (match, timeoutMs = 5000) =>
      waitFor(
        () => frames.find(match) ?? (code !== undefined ? undefined : undefined),
        timeoutMs,
        'no matching frame',
      ),
    closed: (timeoutMs = 5000) => waitFor(() => code, timeoutMs, 'the socket did not close'),
    close: () => socket.close(),
  };
}
