import type { IncomingMessage } from 'node:http';
import WebSocket from 'ws';
import type { ClientFrame, ServerFrame } from '../../src/index.js';

/** A scripted browser stand-in: one WebSocket, its cookies and every frame it received. */
export class TestClient {
  readonly frames: ServerFrame[] = [];
  closeCode: number | undefined;
  private waiters: (() => void)[] = [];

  cookie: string;

  private constructor(
    readonly socket: WebSocket,
    cookie: string,
  ) {
    this.cookie = cookie;
    socket.on('message', (data) => {
      this.frames.push(JSON.parse(String(data)) as ServerFrame);
      for (const wake of this.waiters.splice(0)) wake();
    });
    socket.on('close', (code) => {
      this.closeCode = code;
      for (const wake of this.waiters.splice(0)) wake();
    });
  }

  /**
   * Connects to `<base>ws`, sending `cookie` when given and keeping any cookie the server sets.
   * Rejects with the HTTP status when the upgrade is refused.
   */
  static async connect(
    base: string,
    options: { cookie?: string; room?: string; origin?: string; headers?: Record<string, string> } = {},
  ): Promise<TestClient> {
    const url = new URL('ws', base.replace(/^http/, 'ws'));
    if (options.room !== undefined) url.searchParams.set('room', options.room);
    const headers: Record<string, string> = { ...options.headers };
    if (options.cookie) headers.cookie = options.cookie;
    if (options.origin) headers.origin = options.origin;
    const socket = new WebSocket(url, { headers });
    const client = new TestClient(socket, options.cookie ?? '');
    socket.on('upgrade', (res: IncomingMessage) => {
      const set = res.headers['set-cookie'];
      if (set?.length) client.cookie = set.map((c) => c.split(';')[0]).join('; ');
    });
    await new Promise<void>((resolve, reject) => {
      socket.once('open', () => resolve());
      socket.once('unexpected-response', (_req, res) => reject(new Error(`HTTP ${res.statusCode}`)));
      socket.once('error', reject);
    });
    return client;
  }

  send(frame: ClientFrame | Record<string, unknown>): void {
    this.socket.send(JSON.stringify(frame));
  }

  sendRaw(data: string | Buffer, binary = false): void {
    this.socket.send(data, { binary });
  }

  /** Waits (up to `timeoutMs`) for the first frame from index `from` that matches. */
  async next<T extends ServerFrame['type']>(
    type: T,
    match: (frame: Extract<ServerFrame, { type: T }>) => boolean = () => true,
    timeoutMs = 5000,
  ): Promise<Extract<ServerFrame, { type: T }>> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = this.frames.find(
        (f): f is Extract<ServerFrame, { type: T }> => f.type === type && match(f as never),
      );
      if (found) return found;
      if (this.closeCode !== undefined)
        throw new Error(`socket closed (${this.closeCode}) before a ${type} frame`);
      const left = deadline - Date.now();
      if (left <= 0)
        throw new Error(`no ${type} frame within ${timeoutMs} ms; got ${JSON.stringify(this.frames)}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  /** Frames of one type received so far. */
  all<T extends ServerFrame['type']>(type: T): Extract<ServerFrame, { type: T }>[] {
    return this.frames.filter((f): f is Extract<ServerFrame, { type: T }> => f.type === type);
  }

  /** Waits until the socket is closed; resolves with the close code. */
  async closed(timeoutMs = 5000): Promise<number> {
    const deadline = Date.now() + timeoutMs;
    while (this.closeCode === undefined) {
      if (Date.now() > deadline) throw new Error('socket still open');
      await new Promise((r) => setTimeout(r, 20));
    }
    return this.closeCode;
  }

  close(): void {
    this.socket.close();
  }
}
