import type { AddressInfo } from 'node:net';
import { type WebSocket, WebSocketServer } from 'ws';

/**
 * A silent stand-in for WhatsApp Web's WebSocket endpoint, for the idle bench. It listens on
 * 127.0.0.1, accepts every connection and counts the frames it receives (Baileys' Noise client
 * hello), and never answers: it does not speak the Noise protocol. Baileys therefore stays in its
 * handshake, waiting for the server hello (its `connectTimeoutMs`, 20 s), then closes the socket,
 * and the plugin reconnects with backoff (1 s doubling to 60 s). No QR code is ever shown.
 */
export interface SilentWhatsApp {
  /** The `ws://127.0.0.1:<port>/ws/chat` URL to put in `channels.whatsapp.webSocketUrl`. */
  readonly url: string;
  /** Connections accepted so far. */
  readonly connections: number;
  /** Frames received so far, over every connection. */
  readonly frames: number;
  /**
   * Resolves when the first frame (the client hello) arrived.
   *
   * @throws Error when none arrived within `timeoutMs`
   */
  waitForHello(timeoutMs: number): Promise<void>;
  /** Drops every connection and stops listening. */
  close(): Promise<void>;
}

/**
 * Starts a {@link SilentWhatsApp} on a free loopback port.
 *
 * @returns the running server
 */
export async function startSilentWhatsApp(): Promise<SilentWhatsApp> {
  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  await new Promise<void>((resolve, reject) => {
    wss.once('listening', resolve);
    wss.once('error', reject);
  });
  const clients = new Set<WebSocket>();
  let connections = 0;
  let frames = 0;
  let helloArrived: () => void = () => {};
  const hello = new Promise<void>((resolve) => {
    helloArrived = resolve;
  });
  wss.on('connection', (ws) => {
    connections += 1;
    clients.add(ws);
    ws.on('message', () => {
      frames += 1;
      helloArrived();
    });
    ws.on('close', () => clients.delete(ws));
    ws.on('error', () => clients.delete(ws));
  });
  const { port } = wss.address() as AddressInfo;
  return {
    url: `ws://127.0.0.1:${port}/ws/chat`,
    get connections() {
      return connections;
    },
    get frames() {
      return frames;
    },
    async waitForHello(timeoutMs) {
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new Error(`no WhatsApp client hello within ${timeoutMs} ms`)),
          timeoutMs,
        );
      });
      try {
        await Promise.race([hello, timeout]);
      } finally {
        clearTimeout(timer);
      }
    },
    async close() {
      for (const ws of clients) ws.terminate();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
    },
  };
}
