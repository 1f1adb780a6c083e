import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { type InboundMessage, isColloquyError, type Logger } from '@colloquy/core';
import { LRUCache } from 'lru-cache';
import { type WebSocket, WebSocketServer } from 'ws';
import { mentionsAssistant, normalizeRoomName } from '../chat/addressing.js';
import type { ChatClient, ChatHub } from '../chat/chat-hub.js';
import type { GatewayBridge } from '../chat/gateway-bridge.js';
import type { ResolvedWebChatOptions } from '../options.js';
import type { ChatMessage, ChatPerson, ChatRef, ClientFrame, ErrorFrameCode } from '../protocol/frames.js';
import { parseClientFrame } from '../protocol/parse-client-frame.js';
import type { AddressLimits } from '../security/address-limits.js';
import { acceptedHosts, isAcceptedHost } from '../security/host-check.js';
import type { IdentityIssuer, RequestIdentity } from '../security/identity.js';
import { randomId } from '../security/signed-value.js';
import { createRateLimiter } from '../security/token-bucket.js';

/** The WebSocket side of the web chat. */
export interface SocketServer {
  /** The `upgrade` listener for the HTTP server. */
  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void;
  /** The public face of a visitor (alias and current name). */
  personOf(visitorId: string): ChatPerson;
  /**
   * Refuses new messages from now on with an `unavailable` error frame (the first step of a
   * shutdown); sockets stay open so replies still arrive.
   */
  stopAccepting(): void;
  /** Closes every socket with "going away" and stops the heartbeat. */
  close(): Promise<void>;
}

/** What the socket side needs from the plugin. */
export interface SocketServerOptions {
  options: ResolvedWebChatOptions;
  channelId: string;
  identity: IdentityIssuer;
  hub: ChatHub;
  bridge: GatewayBridge;
  receive: (message: InboundMessage) => Promise<void>;
  /** Limits per client address (shared with the HTTP side, which mints identities too). */
  limits: AddressLimits;
  /** The client address of a request (see `clientAddressOf`). */
  addressOf: (req: IncomingMessage) => string;
  log: Logger;
}

/** Close code of a socket that sent no chat message within `idleSocketMs`. */
export const IDLE_CLOSE_CODE = 4408;

const MAX_SOCKETS_PER_VISITOR = 8;
const MAX_NAMES = 50_000;
const HEARTBEAT_MS = 30_000;

/**
 * Creates the WebSocket server: the `/ws` upgrade (host and origin checks, visitor cookie, room), the frame loop
 * (validation, rate limits, inbound messages, typing, profile, owner panel) and a heartbeat.
 *
 * @param deps - options, identity, hub, bridge and the runtime's `receive`
 */
export function createSocketServer(deps: SocketServerOptions): SocketServer {
  const { options, identity, hub, bridge, limits, log } = deps;
  const accepted = acceptedHosts(options.host, options.allowedHosts);
  const maxPayload = 64 * 1024 + options.maxMessageChars * 4;
  const wss = new WebSocketServer({ noServer: true, maxPayload, perMessageDeflate: false });
  const pendingCookies = new WeakMap<IncomingMessage, string>();
  const names = new LRUCache<string, string>({ max: MAX_NAMES });
  const messageLimiter = createRateLimiter(options.rateLimit);
  const frameLimiter = createRateLimiter({ burst: 60, perSecond: 20 });
  const typingLimiter = createRateLimiter({ burst: 1, perSecond: 0.5 });
  const alive = new WeakSet<WebSocket>();

  wss.on('headers', (headers, req) => {
    const cookie = pendingCookies.get(req);
    if (cookie) headers.push(`Set-Cookie: ${cookie}`);
  });

  const personOf = (visitorId: string): ChatPerson => {
    const id = identity.publicId(visitorId);
    return { id, name: names.get(visitorId) ?? guestName(id) };
  };

  const refuse = (socket: Duplex, status: number, reason: string, message = `${reason}.`): void => {
    const body = Buffer.from(`${message}\n`);
    socket.end(
      `HTTP/1.1 ${status} ${reason}\r\nConnection: close\r\nContent-Type: text/plain; charset=utf-8\r\n` +
        `Content-Length: ${body.length}\r\n\r\n${body.toString()}`,
    );
  };
  const REASONS = { 429: 'Too Many Requests', 503: 'Service Unavailable' } as const;

  const heartbeat = setInterval(() => {
    for (const socket of wss.clients) {
      if (!alive.has(socket)) {
        socket.terminate();
        continue;
      }
      alive.delete(socket);
      socket.ping();
    }
  }, HEARTBEAT_MS);
  heartbeat.unref();

  let accepting = true;

  const sendError = (client: ChatClient, code: ErrorFrameCode, message: string, clientId?: string): void => {
    hub.sendTo(
      client,
      clientId === undefined ? { type: 'error', code, message } : { type: 'error', code, message, clientId },
    );
  };

  const handleMessage = async (client: ChatClient, frame: Extract<ClientFrame, { type: 'message' }>) => {
    if (!messageLimiter.take(client.visitorId)) {
      sendError(client, 'rate_limited', 'You are sending too fast; wait a few seconds.', frame.clientId);
      return;
    }
    if (!limits.message(client.address)) {
      sendError(
        client,
        'rate_limited',
        'Too many messages from your address (all its visitors share one budget); wait a few seconds.',
        frame.clientId,
      );
      return;
    }
    if (!accepting) {
      sendError(
        client,
        'unavailable',
        'The assistant is restarting and did not take this message; send it again in a moment.',
        frame.clientId,
      );
      return;
    }
    const person = personOf(client.visitorId);
    const message: ChatMessage = {
      // A client's own id makes a resend after a reconnect the same message (it runs once).
      id:
        frame.clientId === undefined ? `in_${Date.now().toString(36)}${randomId(6)}` : `c_${frame.clientId}`,
      role: 'user',
      text: frame.text,
      sender: person,
      at: Date.now(),
    };
    const direct = client.chat.type === 'direct';
    const inbound: InboundMessage = {
      channel: deps.channelId,
      accountId: options.accountId,
      chat: direct
        ? { type: 'direct', id: client.chat.id }
        : { type: 'group', id: client.chat.id, title: client.chat.id },
      sender: { id: client.visitorId, name: person.name, ...(client.admin ? { isOwner: true } : {}) },
      text: frame.text,
      mentionsBot: direct || mentionsAssistant(frame.text, options.assistantName),
      messageId: message.id,
      timestamp: message.at,
    };
    try {
      await deps.receive(inbound);
    } catch (error) {
      log.warn({ err: error }, 'webchat: the runtime did not accept a message');
      sendError(client, 'unavailable', refusalFor(error), frame.clientId);
      return;
    }
    // The echo is the acknowledgement: sent only once the runtime has stored the message.
    hub.remember(client.chat.id, message);
    if (frame.clientId === undefined) hub.sendTo(client, { type: 'message', message });
    else hub.sendTo(client, { type: 'message', message, clientId: frame.clientId });
    hub.broadcast(client.chat.id, { type: 'message', message }, client);
  };

  /** True for the owner; anyone else is told that `what` is for the owner. */
  const ownerOnly = (client: ChatClient, what: string): boolean => {
    if (!client.admin)
      sendError(client, 'forbidden', `${what} is for the owner; open the page with ?admin=<token>.`);
    return client.admin;
  };

  const handleFrame = async (client: ChatClient, frame: ClientFrame): Promise<void> => {
    switch (frame.type) {
      case 'message':
        return handleMessage(client, frame);
      case 'typing':
        if (client.chat.type === 'group' && typingLimiter.take(client.visitorId)) {
          hub.broadcast(
            client.chat.id,
            { type: 'typing', role: 'user', sender: personOf(client.visitorId) },
            client,
          );
        }
        return;
      case 'profile':
        names.set(client.visitorId, frame.name);
        hub.sendTo(client, { type: 'profile', you: personOf(client.visitorId) });
        return;
      case 'ping':
        hub.sendTo(client, { type: 'pong' });
        return;
      case 'sessions.refresh': {
        if (!ownerOnly(client, 'The session panel')) return;
        const rows = await bridge.sessionRows().catch(() => undefined);
        if (rows) hub.sendTo(client, { type: 'sessions', now: Date.now(), ...rows });
        else sendError(client, 'unavailable', 'Sessions cannot be listed right now.');
        return;
      }
      case 'transcript': {
        if (!ownerOnly(client, 'Transcripts')) return;
        const transcript = await bridge.transcript(frame.key).catch((error: unknown) => {
          log.debug({ err: error, key: frame.key }, 'webchat: could not read a transcript');
          return undefined;
        });
        if (transcript) hub.sendTo(client, { type: 'transcript', ...transcript });
        else sendError(client, 'unavailable', `The transcript of ${frame.key} cannot be read right now.`);
        return;
      }
      case 'tree': {
        if (!ownerOnly(client, 'The spawn timeline')) return;
        const tree = await bridge.watchTree(client, frame.key).catch((error: unknown) => {
          log.debug({ err: error, key: frame.key }, 'webchat: could not read a spawn tree');
          return null;
        });
        if (tree) hub.sendTo(client, { type: 'tree', tree });
        else if (tree === null || frame.key !== undefined) {
          sendError(client, 'unavailable', `The spawn tree of ${frame.key} cannot be read right now.`);
        }
        return;
      }
    }
  };

  const onConnection = (socket: WebSocket, who: RequestIdentity, chat: ChatRef, address: string): void => {
    const client: ChatClient = { socket, visitorId: who.visitorId, address, chat, admin: who.admin };
    hub.join(client);
    alive.add(socket);
    let queue: Promise<void> = Promise.resolve();
    let floodNoticeAt = Number.NEGATIVE_INFINITY;
    // A socket that never sends a chat message is closed after idleSocketMs, so parked sockets do not
    // hold the caps; the page reconnects when its visitor comes back. The owner's panel stays open.
    const idle =
      options.idleSocketMs > 0 && !client.admin
        ? setTimeout(() => socket.close(IDLE_CLOSE_CODE, 'idle: no message sent'), options.idleSocketMs)
        : undefined;
    idle?.unref();
    socket.on('pong', () => alive.add(socket));
    socket.on('error', (error) => log.debug({ err: error }, 'webchat: socket error'));
    socket.on('close', () => {
      clearTimeout(idle);
      hub.leave(client);
    });
    socket.on('message', (data, isBinary) => {
      alive.add(socket);
      if (!frameLimiter.take(client.visitorId)) {
        // One notice a second at most, so a flood is not answered frame for frame.
        const now = performance.now();
        if (now - floodNoticeAt > 1000) {
          floodNoticeAt = now;
          sendError(client, 'rate_limited', 'Too many frames; slow down.');
        }
        return;
      }
      const raw = Array.isArray(data)
        ? Buffer.concat(data)
        : Buffer.isBuffer(data)
          ? data
          : Buffer.from(data);
      const parsed = parseClientFrame(raw, isBinary, options);
      if (!parsed.ok) {
        sendError(client, parsed.code, parsed.message, parsed.clientId);
        return;
      }
      if (parsed.frame.type === 'message') clearTimeout(idle);
      queue = queue
        .then(() => handleFrame(client, parsed.frame))
        .catch((error: unknown) => {
          log.warn({ err: error }, 'webchat: frame handling failed');
          sendError(client, 'internal', 'Something went wrong on the server; try again.');
        });
    });

    hub.sendTo(client, {
      type: 'ready',
      you: personOf(client.visitorId),
      chat,
      admin: client.admin,
      title: options.title,
      assistantName: options.assistantName,
      maxMessageChars: options.maxMessageChars,
    });
    queue = hub
      .history(chat)
      .then(async (messages) => {
        hub.sendTo(client, { type: 'history', messages });
        for (const frame of bridge.liveRunFrames(chat.id)) hub.sendTo(client, frame);
        if (client.admin) await handleFrame(client, { type: 'sessions.refresh' });
      })
      .catch((error: unknown) => log.warn({ err: error }, 'webchat: could not send the history'));
  };

  return {
    handleUpgrade(req, socket, head) {
      socket.on('error', () => {});
      let url: URL;
      try {
        url = new URL(req.url ?? '/', 'http://webchat.invalid');
      } catch {
        return refuse(socket, 400, 'Bad Request');
      }
      if (url.pathname !== '/ws') return refuse(socket, 404, 'Not Found');
      if (!isAcceptedHost(req.headers.host, accepted)) {
        log.warn({ host: req.headers.host }, 'webchat: refused a WebSocket for a host it does not serve');
        return refuse(socket, 403, 'Forbidden');
      }
      if (!sameOrigin(req)) {
        log.warn({ origin: req.headers.origin }, 'webchat: refused a WebSocket from another origin');
        return refuse(socket, 403, 'Forbidden');
      }
      const roomParam = url.searchParams.get('room');
      let chat: ChatRef | undefined;
      const who = identity.identify(req.headers);
      if (roomParam === null || roomParam === '') chat = { type: 'direct', id: who.visitorId };
      else {
        const room = normalizeRoomName(roomParam);
        if (room === undefined) return refuse(socket, 400, 'Bad Request');
        chat = { type: 'group', id: room };
      }
      if (hub.socketsOf(who.visitorId) >= MAX_SOCKETS_PER_VISITOR) {
        return refuse(
          socket,
          429,
          REASONS[429],
          `Too many open chats for this visitor (at most ${MAX_SOCKETS_PER_VISITOR}); close a tab.`,
        );
      }
      const address = deps.addressOf(req);
      const refusal = limits.canOpen(address) ?? (who.setCookie ? limits.newVisitor(address) : undefined);
      if (refusal) {
        log.warn(
          { address, status: refusal.status },
          'webchat: refused a WebSocket over a per-address limit',
        );
        return refuse(socket, refusal.status, REASONS[refusal.status], refusal.message);
      }
      // Counted from here until the TCP socket closes, whether or not the upgrade completes.
      limits.opened(address);
      socket.once('close', () => limits.closed(address));
      if (who.setCookie) pendingCookies.set(req, who.setCookie);
      const target = chat;
      wss.handleUpgrade(req, socket, head, (ws) => onConnection(ws, who, target, address));
    },
    personOf,
    stopAccepting() {
      accepting = false;
    },
    async close() {
      clearInterval(heartbeat);
      for (const socket of wss.clients) socket.close(1001, 'server shutting down');
      await new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          for (const socket of wss.clients) socket.terminate();
          resolve();
        }, 1000);
        timer.unref();
        wss.close(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    },
  };
}

/**
 * The default name of a visitor: `Guest` and 8 hex digits of their public id (`u_` + 12). Four digits
 * made two of a few hundred guests share a name; eight keep them apart in a list of sessions.
 */
export function guestName(publicId: string): string {
  return `Guest ${publicId.slice(2, 10)}`;
}

/** A browser's `Origin` must name the host it connects to; clients that send none (not browsers) pass. */
function sameOrigin(req: IncomingMessage): boolean {
  const origin = req.headers.origin;
  if (origin === undefined) return true;
  try {
    return new URL(origin).host === req.headers.host;
  } catch {
    return false;
  }
}

/**
 * What a visitor reads when the runtime did not take their message: a full disk lasts until the owner
 * frees space, so "in a moment" would send them into a loop of refusals.
 */
function refusalFor(error: unknown): string {
  if (isColloquyError(error) && error.details.reason === 'disk-full') {
    return 'The assistant cannot take new messages right now: its storage is full, and its owner has to make room. Try again later.';
  }
  return 'The assistant could not take your message; send it again in a moment.';
}
