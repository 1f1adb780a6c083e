import { createConnection, createServer, type Socket } from 'node:net';

/** A TCP relay in front of a PostgreSQL server that counts the round trips its clients make. */
export interface RoundTripCounter {
  /** `url` with its host and port pointed at the relay; connect the code under test to it. */
  readonly url: string;
  /** Round trips since the start or the last {@link RoundTripCounter.reset}. */
  count(): number;
  /** Starts counting from 0 again. */
  reset(): void;
  /** Closes the relay and every connection through it. */
  close(): Promise<void>;
}

/**
 * Frontend messages that make the client wait for the server: a simple query (`Q`), the end of
 * an extended query (`S`, Sync) and a function call (`F`). A driver that pipelines several
 * extended queries before it waits would be counted once per Sync; `pg` waits for each.
 */
const WAITS_FOR_SERVER = new Set(['Q', 'S', 'F']);

/**
 * Starts a relay on 127.0.0.1 in front of the server of `url` that reads the client side of the
 * PostgreSQL wire protocol and counts the messages after which a client waits for the server:
 * round trips as the network sees them, whatever the driver. Connection start-up and
 * authentication are not counted.
 *
 * @param url - a `postgres://` URL of the server to relay to
 * @returns the counter; close it with `await counter.close()`
 * @example
 * ```ts
 * const counter = await startRoundTripCounter(url);
 * const store = await openPostgresStore({ url: counter.url });
 * counter.reset();
 * await store.getSession('agent:main:main');
 * console.log(counter.count()); // 1
 * ```
 */
export async function startRoundTripCounter(url: string): Promise<RoundTripCounter> {
  const target = new URL(url);
  const port = Number(target.port || 5432);
  let count = 0;
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = createConnection({ host: target.hostname, port });
    sockets.add(client).add(upstream);
    const forget = () => {
      sockets.delete(client);
      sockets.delete(upstream);
      client.destroy();
      upstream.destroy();
    };
    client.on('close', forget).on('error', forget);
    upstream.on('close', forget).on('error', forget);
    upstream.pipe(client);
    const frames = new FrontendFrames((type) => {
      if (WAITS_FOR_SERVER.has(type)) count++;
    });
    client.on('data', (chunk: Buffer) => {
      frames.push(chunk);
      upstream.write(chunk);
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('The relay has no TCP port.');
  const relayed = new URL(url);
  relayed.hostname = '127.0.0.1';
  relayed.port = String(address.port);
  return {
    url: relayed.toString(),
    count: () => count,
    reset: () => {
      count = 0;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/**
 * Splits the client side of a connection into messages: first the untyped start-up message
 * (length, then body), then typed ones (a type byte, then a length that counts itself).
 */
class FrontendFrames {
  private buffered: Buffer = Buffer.alloc(0);
  private started = false;

  constructor(private readonly onMessage: (type: string) => void) {}

  push(chunk: Buffer): void {
    this.buffered = this.buffered.length === 0 ? chunk : Buffer.concat([this.buffered, chunk]);
    for (;;) {
      const head = this.started ? 1 : 0;
      if (this.buffered.length < head + 4) return;
      const size = head + this.buffered.readInt32BE(head);
      if (this.buffered.length < size) return;
      if (this.started) this.onMessage(String.fromCharCode(this.buffered[0]!));
      else if (!ENCRYPTION_REQUESTS.has(this.buffered.readInt32BE(4))) this.started = true;
      this.buffered = this.buffered.subarray(size);
    }
  }
}

/** The codes of SSLRequest and GSSENCRequest, which precede the start-up message when a client asks for them. */
const ENCRYPTION_REQUESTS = new Set([80877103, 80877104]);
