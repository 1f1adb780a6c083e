import type { WebSocket } from 'ws';
import type { ChatMessage, ChatRef, ServerFrame } from '../protocol/frames.js';

/** One connected browser tab. */
export interface ChatClient {
  readonly socket: WebSocket;
  readonly visitorId: string;
  /** The client address the per-address limits count it under. */
  readonly address: string;
  readonly chat: ChatRef;
  readonly admin: boolean;
}

/** Sockets grouped by chat, and the recent messages of each chat. */
export interface ChatHub {
  join(client: ChatClient): void;
  leave(client: ChatClient): void;
  /** Every connected client (for shutdown). */
  clients(): Iterable<ChatClient>;
  /** Connected clients of one chat (visitor id or room name). */
  clientsOf(chatId: string): readonly ChatClient[];
  /** How many sockets a visitor has open. */
  socketsOf(visitorId: string): number;
  /** Connected owner sockets. */
  admins(): readonly ChatClient[];
  /** Sends a frame to every socket of a chat, except `except`. Returns how many got it. */
  broadcast(chatId: string, frame: ServerFrame, except?: ChatClient): number;
  /** Sends a frame to one client, dropping clients that stopped reading. */
  sendTo(client: ChatClient, frame: ServerFrame): void;
  /** The recent messages of a chat, loaded once (from `load`) and kept up to date after. */
  history(chat: ChatRef): Promise<ChatMessage[]>;
  /** Records a message in the chat's recent history (if that history is kept). */
  remember(chatId: string, message: ChatMessage): void;
  /** The kept message with this id, if the chat's history holds it. */
  find(chatId: string, id: string): ChatMessage | undefined;
  /** Replaces the kept message with `message.id` (an edit); nothing when it is not kept. */
  replace(chatId: string, message: ChatMessage): void;
  /** Drops the kept message with this id (a delete). */
  forget(chatId: string, id: string): void;
}

/** A client that has this many bytes unsent is too slow and is dropped. */
const MAX_BUFFERED_BYTES = 4 * 1024 * 1024;
const MAX_KEPT_CHATS = 500;

interface HistoryEntry {
  ready: Promise<void>;
  messages: ChatMessage[];
}

/**
 * Creates the hub.
 *
 * @param options - `limit`: messages kept per chat; `load`: fetches a chat's earlier messages (e.g. from
 *   the gateway's transcript) the first time the chat is opened in this process
 */
export function createChatHub(options: {
  limit: number;
  load: (chat: ChatRef) => Promise<ChatMessage[]>;
}): ChatHub {
  const byChat = new Map<string, Set<ChatClient>>();
  const byVisitor = new Map<string, number>();
  const admins = new Set<ChatClient>();
  // A Map, not lru-cache: eviction skips chats that still have open sockets, which lru-cache cannot.
  const histories = new Map<string, HistoryEntry>();

  const sendRaw = (client: ChatClient, data: string): boolean => {
    if (client.socket.readyState !== client.socket.OPEN) return false;
    if (client.socket.bufferedAmount > MAX_BUFFERED_BYTES) {
      client.socket.terminate();
      return false;
    }
    client.socket.send(data);
    return true;
  };

  const push = (entry: HistoryEntry, message: ChatMessage): void => {
    if (entry.messages.some((m) => m.id === message.id)) return;
    entry.messages.push(message);
    if (entry.messages.length > options.limit)
      entry.messages.splice(0, entry.messages.length - options.limit);
  };

  const evict = (): void => {
    for (const chatId of histories.keys()) {
      if (histories.size <= MAX_KEPT_CHATS) return;
      if (!byChat.has(chatId)) histories.delete(chatId);
    }
  };

  return {
    join(client) {
      const set = byChat.get(client.chat.id) ?? new Set<ChatClient>();
      byChat.set(client.chat.id, set);
      set.add(client);
      byVisitor.set(client.visitorId, (byVisitor.get(client.visitorId) ?? 0) + 1);
      if (client.admin) admins.add(client);
    },
    leave(client) {
      const set = byChat.get(client.chat.id);
      if (set?.delete(client) && set.size === 0) byChat.delete(client.chat.id);
      const count = (byVisitor.get(client.visitorId) ?? 1) - 1;
      if (count <= 0) byVisitor.delete(client.visitorId);
      else byVisitor.set(client.visitorId, count);
      admins.delete(client);
    },
    *clients() {
      for (const set of byChat.values()) yield* set;
    },
    clientsOf: (chatId) => [...(byChat.get(chatId) ?? [])],
    socketsOf: (visitorId) => byVisitor.get(visitorId) ?? 0,
    admins: () => [...admins],
    broadcast(chatId, frame, except) {
      const set = byChat.get(chatId);
      if (!set) return 0;
      const data = JSON.stringify(frame);
      let sent = 0;
      for (const client of set) if (client !== except && sendRaw(client, data)) sent += 1;
      return sent;
    },
    sendTo(client, frame) {
      sendRaw(client, JSON.stringify(frame));
    },
    async history(chat) {
      let entry = histories.get(chat.id);
      if (entry) {
        histories.delete(chat.id);
        histories.set(chat.id, entry);
      } else {
        const fresh: HistoryEntry = { messages: [], ready: Promise.resolve() };
        fresh.ready = options.load(chat).then(
          (loaded) => {
            const live = fresh.messages;
            fresh.messages = [];
            for (const m of [...loaded.slice(-options.limit), ...live]) push(fresh, m);
          },
          () => {},
        );
        histories.set(chat.id, fresh);
        evict();
        entry = fresh;
      }
      await entry.ready;
      return [...entry.messages];
    },
    remember(chatId, message) {
      const entry = histories.get(chatId);
      if (entry) push(entry, message);
    },
    find: (chatId, id) => histories.get(chatId)?.messages.find((m) => m.id === id),
    replace(chatId, message) {
      const messages = histories.get(chatId)?.messages;
      const index = messages?.findIndex((m) => m.id === message.id) ?? -1;
      if (messages && index >= 0) messages[index] = message;
    },
    forget(chatId, id) {
      const messages = histories.get(chatId)?.messages;
      const index = messages?.findIndex((m) => m.id === id) ?? -1;
      if (messages && index >= 0) messages.splice(index, 1);
    },
  };
}
