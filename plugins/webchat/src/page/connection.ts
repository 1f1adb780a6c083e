import type { ClientFrame, ServerFrame } from '../protocol/frames.js';

/** The server's close code for a socket that sent no message in time (`idleSocketMs`). */
const IDLE_CLOSE_CODE = 4408;
/** What counts as the visitor coming back to an idle page. */
const COME_BACK_EVENTS = ['focus', 'pointerdown', 'keydown'] as const;

/** The connection's state, shown in the header. */
export type ConnectionState = 'connecting' | 'online' | 'offline';

/** A WebSocket to the chat server that reconnects with backoff. */
export interface Connection {
  send(frame: ClientFrame): boolean;
}

/**
 * Opens the chat socket and keeps it open: reconnects after 0.5 s, doubling up to 10 s (with jitter),
 * and at once when the browser comes back online. A socket the server closed as idle (code 4408, no
 * message sent for a while) reconnects only when the visitor comes back to the page.
 *
 * @param url - the `ws:`/`wss:` URL
 * @param onFrame - called with every parsed server frame
 * @param onState - called when the connection state changes
 */
export function connect(
  url: string,
  onFrame: (frame: ServerFrame) => void,
  onState: (state: ConnectionState) => void,
): Connection {
  let socket: WebSocket | undefined;
  let attempt = 0;
  let timer: number | undefined;

  const open = (): void => {
    window.clearTimeout(timer);
    timer = undefined;
    onState('connecting');
    const ws = new WebSocket(url);
    socket = ws;
    ws.addEventListener('message', (event) => {
      if (typeof event.data !== 'string') return;
      let frame: ServerFrame;
      try {
        frame = JSON.parse(event.data) as ServerFrame;
      } catch {
        return;
      }
      if (frame.type === 'ready') {
        attempt = 0;
        onState('online');
      }
      onFrame(frame);
    });
    ws.addEventListener('close', (event) => {
      if (socket !== ws) return;
      socket = undefined;
      onState('offline');
      if (event.code === IDLE_CLOSE_CODE) {
        for (const type of COME_BACK_EVENTS) window.addEventListener(type, comeBack, { once: true });
        return;
      }
      // core's backoffDelay, written out: this page is served as plain browser modules without a
      // bundler, so it cannot import @colloquy/core. 0.5 s doubling to 10 s, less up to 20 % at random.
      const delay = Math.min(10_000, 500 * 2 ** Math.min(attempt, 16)) * (1 - 0.2 * Math.random());
      attempt += 1;
      timer = window.setTimeout(open, delay);
    });
  };

  const comeBack = (): void => {
    for (const type of COME_BACK_EVENTS) window.removeEventListener(type, comeBack);
    if (!socket) open();
  };
  window.addEventListener('online', () => {
    if (!socket) open();
  });
  open();

  return {
    send(frame) {
      if (!socket || socket.readyState !== WebSocket.OPEN) return false;
      socket.send(JSON.stringify(frame));
      return true;
    },
  };
}
