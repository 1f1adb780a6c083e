import { type Gateway, type Logger, parseSessionKey } from '@colloquy/core';
import type { GatewayEvent, SessionsTreeResult } from '@colloquy/core/gateway';
import { LRUCache } from 'lru-cache';
import type { ChatMessage, ChatPerson, ChatRef, ServerFrame, SessionRow } from '../protocol/frames.js';
import type { ChatClient, ChatHub } from './chat-hub.js';
import { toSessionRow, transcriptToChat } from './transcript-view.js';

/** What the plugin asks of the gateway: history, the owner panel and run streaming. */
export interface GatewayBridge {
  /** The earlier messages of a chat, from its session's transcript (empty without a gateway). */
  loadHistory(chat: ChatRef): Promise<ChatMessage[]>;
  /**
   * Waits until events already received for the chat's session are relayed, then claims the oldest run
   * streamed into the chat that no final message has closed yet.
   */
  claimStreamedRun(chatId: string): Promise<string | undefined>;
  /** Frames that bring a (re)connected page up to date with runs still streaming into its chat. */
  liveRunFrames(chatId: string): ServerFrame[];
  /** The owner panel's rows, or `undefined` without a gateway. */
  sessionRows(): Promise<{ total: number; sessions: SessionRow[] } | undefined>;
  /**
   * The latest messages of any session (`chat.history`), for the owner's read-only view; `undefined`
   * without a gateway. Rejects with the gateway's error (e.g. `SESSION_NOT_FOUND`).
   */
  transcript(key: string): Promise<{ key: string; total: number; messages: ChatMessage[] } | undefined>;
  /**
   * The spawn tree below `key` (`sessions.tree`) for an owner socket, which then gets it again with
   * the panel's debounced pushes until it watches another or none (`undefined`). Resolves
   * `undefined` without a gateway or when no key is given; rejects with the gateway's error.
   */
  watchTree(client: ChatClient, key: string | undefined): Promise<SessionsTreeResult | undefined>;
  /** Unsubscribes and drops timers. */
  close(): void;
}

interface Target {
  chatId: string | undefined;
  /** False when the session's own send policy is `deny`: nothing is streamed. */
  stream: boolean;
}

interface LiveRun {
  chatId: string;
  text: string;
  /** When the run ended (`performance.now()` ms). */
  endedAt?: number;
}

const PANEL_LIMIT = 200;
const TRANSCRIPT_LIMIT = 200;
/** The most sessions and runs per session the timeline shows. */
const TREE_MAX_NODES = 1000;
const TREE_RUNS_PER_NODE = 20;
const PANEL_DEBOUNCE_MS = 200;
const SESSION_SEARCH_LIMIT = 1000;
const MAX_STREAM_CHARS = 200_000;
/** The most sessions whose delivery target (and the most chats whose session) the bridge remembers. */
const MAX_CACHED_TARGETS = 10_000;
const MAX_LIVE_RUNS = 1000;
/** A finished run that got no final message within this time is no longer matched to one. */
const CLAIM_WINDOW_MS = 15_000;

/**
 * Connects the chat hub to the gateway: streams `run.*` events of web chat sessions into their chats,
 * loads history on first open and keeps owner sockets' session panel fresh.
 *
 * @param options - the gateway (may be absent), this plugin's channel id, the hub and helpers
 */
export function createGatewayBridge(options: {
  gateway: Gateway | undefined;
  channelId: string;
  hub: ChatHub;
  log: Logger;
  historyLimit: number;
  publicSender: (sender: { id: string; name?: string }) => ChatPerson;
  /** The most sessions and chats it remembers (default 10,000); a forgotten one is looked up again. */
  maxCached?: number;
}): GatewayBridge {
  const { gateway, channelId, hub, log } = options;
  const maxCached = options.maxCached ?? MAX_CACHED_TARGETS;
  const targets = new LRUCache<string, Target>({ max: maxCached });
  // Bounded like `targets`: every visitor is a chat, and a server runs for months.
  const sessionOfChat = new LRUCache<string, string>({ max: maxCached });
  const queues = new Map<string, Promise<void>>();
  // A Map, not lru-cache: a registry of live runs, read and claimed in the order they started (reads
  // must not reorder it) and deleted from while iterated; its cap only guards against runs that never end.
  const runs = new Map<string, LiveRun>();
  /** The spawn tree root each owner socket watches. */
  const treeWatchers = new Map<ChatClient, string>();
  let panelTimer: NodeJS.Timeout | undefined;
  let closed = false;

  const remember = (sessionKey: string, target: Target): Target => {
    targets.set(sessionKey, target);
    return target;
  };

  /**
   * The cached target, or, for a key that names another channel, no target without asking the
   * gateway: such a key is made by that channel's inbound, which makes that channel the session's
   * delivery context. So the turns of other channels cost the web chat no `session.status` call.
   */
  const known = (sessionKey: string): Target | undefined => {
    const cached = targets.get(sessionKey);
    if (cached) return cached;
    const parsed = parseSessionKey(sessionKey);
    const channel = parsed.ok && 'channel' in parsed.key ? parsed.key.channel : undefined;
    return channel !== undefined && channel !== channelId
      ? remember(sessionKey, { chatId: undefined, stream: false })
      : undefined;
  };

  const lookup = async (sessionKey: string): Promise<Target> => {
    const cached = known(sessionKey);
    if (cached) return cached;
    let target: Target = { chatId: undefined, stream: false };
    try {
      const { session } = await gateway!.call('session.status', { key: sessionKey });
      const to = session.deliveryContext;
      if (to?.channel === channelId) {
        target = { chatId: to.to, stream: session.sendPolicy !== 'deny' };
        sessionOfChat.set(to.to, sessionKey);
      }
    } catch (error) {
      log.debug({ err: error, sessionKey }, 'webchat: session lookup failed');
    }
    return remember(sessionKey, target);
  };

  /** Runs `task` after every earlier task of the same session, so frames keep the events' order. */
  const enqueue = (sessionKey: string, task: () => Promise<void> | void): void => {
    const next = (queues.get(sessionKey) ?? Promise.resolve()).then(task).catch((error: unknown) => {
      log.warn({ err: error, sessionKey }, 'webchat: could not relay a gateway event');
    });
    queues.set(sessionKey, next);
    void next.then(() => {
      if (queues.get(sessionKey) === next) queues.delete(sessionKey);
    });
  };

  const relay = (event: GatewayEvent & { runId: string }, frame: (chatId: string) => ServerFrame): void => {
    const forward = (target: Target): void => {
      if (closed || target.chatId === undefined || !target.stream) return;
      hub.broadcast(target.chatId, frame(target.chatId));
    };
    const cached = known(event.sessionKey);
    // Known session and nothing queued before it: forward at once, keeping order with send().
    if (cached && !queues.has(event.sessionKey)) forward(cached);
    else enqueue(event.sessionKey, async () => forward(await lookup(event.sessionKey)));
  };

  const schedulePanel = (): void => {
    if (panelTimer || closed || hub.admins().length === 0) return;
    panelTimer = setTimeout(() => {
      panelTimer = undefined;
      void pushPanel();
    }, PANEL_DEBOUNCE_MS);
    panelTimer.unref();
  };

  const sessionRows = async (): Promise<{ total: number; sessions: SessionRow[] } | undefined> => {
    if (!gateway) return undefined;
    const result = await gateway.call('sessions.list', { limit: PANEL_LIMIT });
    // A session no run ever started holds no conversation: a visitor who only sent slash commands
    // (answered by the bot and, by design, not stored: a command's answer may quote sessions that
    // others who can read this transcript may not see). The panel leaves them out, and out of the
    // total as far as this page tells.
    const conversations = result.sessions.filter((session) => session.status !== undefined);
    const left = result.sessions.length - conversations.length;
    return { total: result.total - left, sessions: conversations.map(toSessionRow) };
  };

  const treeOf = (key: string): Promise<SessionsTreeResult> =>
    gateway!.call('sessions.tree', { key, maxNodes: TREE_MAX_NODES, runsPerNode: TREE_RUNS_PER_NODE });

  const pushPanel = async (): Promise<void> => {
    try {
      const rows = await sessionRows();
      if (!rows || closed) return;
      const frame: ServerFrame = { type: 'sessions', now: Date.now(), ...rows };
      for (const admin of hub.admins()) hub.sendTo(admin, frame);
    } catch (error) {
      log.warn({ err: error }, 'webchat: could not list sessions for the owner panel');
    }
    await pushTrees();
  };

  /** One `sessions.tree` call per watched root, sent to each owner socket watching it. */
  const pushTrees = async (): Promise<void> => {
    const admins = new Set(hub.admins());
    const byRoot = new Map<string, ChatClient[]>();
    for (const [client, key] of treeWatchers) {
      if (!admins.has(client)) {
        treeWatchers.delete(client);
        continue;
      }
      byRoot.set(key, [...(byRoot.get(key) ?? []), client]);
    }
    for (const [key, clients] of byRoot) {
      try {
        const tree = await treeOf(key);
        if (closed) return;
        for (const client of clients)
          if (treeWatchers.get(client) === key) hub.sendTo(client, { type: 'tree', tree });
      } catch (error) {
        log.debug({ err: error, key }, 'webchat: could not read a spawn tree for the owner panel');
      }
    }
  };

  const onEvent = (event: GatewayEvent): void => {
    switch (event.type) {
      case 'run.started':
        relay(event, (chatId) => {
          if (runs.size >= MAX_LIVE_RUNS) runs.delete(runs.keys().next().value!);
          runs.set(event.runId, { chatId, text: '' });
          return { type: 'run', runId: event.runId, state: 'started' };
        });
        break;
      case 'run.delta':
        relay(event, () => {
          const run = runs.get(event.runId);
          if (run && run.text.length < MAX_STREAM_CHARS) run.text += event.text;
          return { type: 'delta', runId: event.runId, text: event.text };
        });
        break;
      case 'run.ended':
        relay(event, () => {
          const run = runs.get(event.runId);
          if (run) {
            if (event.status === 'done') run.endedAt = performance.now();
            else runs.delete(event.runId);
          }
          const frame: ServerFrame = {
            type: 'run',
            runId: event.runId,
            state: 'ended',
            status: event.status,
          };
          if (event.error !== undefined) frame.error = event.error;
          return frame;
        });
        break;
      case 'session.updated':
      case 'session.deleted':
        enqueue(event.sessionKey, () => {
          targets.delete(event.sessionKey);
        });
        break;
      default:
        break;
    }
    // A tool call changes only the timeline (its bars show the calls), not the session rows.
    if (
      event.type === 'run.tool'
        ? treeWatchers.size > 0
        : event.type !== 'run.delta' && event.type !== 'delivery'
    ) {
      schedulePanel();
    }
  };

  const unsubscribe = gateway?.subscribe?.(onEvent);

  const findSessionKey = async (chat: ChatRef): Promise<string | undefined> => {
    const known = sessionOfChat.get(chat.id);
    if (known) return known;
    const { sessions } = await gateway!.call('sessions.list', { limit: SESSION_SEARCH_LIMIT });
    const match = sessions.find(
      (s) =>
        (s.deliveryContext?.channel === channelId && s.deliveryContext.to === chat.id) ||
        (s.lastChannel === channelId && s.lastTo === chat.id),
    );
    return match?.key;
  };

  return {
    async loadHistory(chat) {
      if (!gateway || options.historyLimit === 0) return [];
      try {
        const key = await findSessionKey(chat);
        if (key === undefined) return [];
        const { messages } = await gateway.call('chat.history', { key, limit: options.historyLimit });
        return transcriptToChat(messages, options.publicSender);
      } catch (error) {
        log.warn({ err: error, chat: chat.type }, 'webchat: could not load chat history');
        return [];
      }
    },
    async claimStreamedRun(chatId) {
      // Unknown chat: its first events may still be resolving their session, so wait for all of them.
      const sessionKey = sessionOfChat.get(chatId);
      if (sessionKey === undefined) await Promise.all(queues.values());
      else await queues.get(sessionKey);
      const now = performance.now();
      for (const [runId, run] of runs) {
        if (run.endedAt !== undefined && now - run.endedAt > CLAIM_WINDOW_MS) {
          runs.delete(runId);
          continue;
        }
        if (run.chatId === chatId) {
          runs.delete(runId);
          return runId;
        }
      }
      return undefined;
    },
    liveRunFrames(chatId) {
      const frames: ServerFrame[] = [];
      for (const [runId, run] of runs) {
        if (run.chatId !== chatId || run.endedAt !== undefined) continue;
        frames.push({ type: 'run', runId, state: 'started' });
        if (run.text) frames.push({ type: 'delta', runId, text: run.text });
      }
      return frames;
    },
    sessionRows,
    async transcript(key) {
      if (!gateway) return undefined;
      const result = await gateway.call('chat.history', { key, limit: TRANSCRIPT_LIMIT });
      return {
        key: result.sessionKey,
        total: result.total,
        messages: transcriptToChat(result.messages, options.publicSender),
      };
    },
    async watchTree(client, key) {
      if (key === undefined) {
        treeWatchers.delete(client);
        return undefined;
      }
      if (!gateway) return undefined;
      const tree = await treeOf(key);
      treeWatchers.set(client, tree.rootKey);
      return tree;
    },
    close() {
      closed = true;
      treeWatchers.clear();
      unsubscribe?.();
      if (panelTimer) clearTimeout(panelTimer);
      panelTimer = undefined;
    },
  };
}
