import {
  type ChannelContext,
  type ChannelPlugin,
  ColloquyError,
  type Gateway,
  type InboundMessage,
  type SessionRecord,
  type StoredMessage,
  silentLogger,
  type TranscriptMessage,
} from '@colloquy/core';
import type { GatewayEvent, GatewayMethod, GatewayParams, GatewayResult } from '@colloquy/core/gateway';
import { createPairingAccess, createThreadBindingAccess } from '@colloquy/core/internal';
import { MemoryStore } from '@colloquy/core/store';

/** How the fake assistant answers a message. */
export type Replier = (message: InboundMessage) => string | undefined;

/** Options of the hand-made host. */
export interface FakeHostOptions {
  /** The reply text; default echoes "You said: <text>". `undefined` means no reply. */
  reply?: Replier;
  /** Milliseconds between streamed words. Default 15. */
  deltaDelayMs?: number;
  /** Emit run events and stream deltas before the final send. Default true. */
  stream?: boolean;
}

/**
 * A hand-made stand-in for the runtime: a ChannelContext whose `receive` records the message in an
 * in-memory session, streams a scripted reply as `run.delta` events and delivers it with `plugin.send`,
 * plus a minimal gateway serving `session.status`, `sessions.list` and `chat.history`.
 */
export class FakeHost {
  readonly received: InboundMessage[] = [];
  readonly sessions = new Map<string, SessionRecord>();
  readonly transcripts = new Map<string, StoredMessage[]>();
  readonly events: GatewayEvent[] = [];
  readonly gateway: Gateway;
  readonly controller = new AbortController();
  private readonly listeners = new Set<(event: GatewayEvent) => void>();
  private plugin: ChannelPlugin | undefined;
  /** Backs `threadBindings` and `pairing` (the web chat uses neither). */
  private readonly bindings = new MemoryStore();
  private runCounter = 0;
  private readonly work = new Set<Promise<void>>();

  constructor(private readonly options: FakeHostOptions = {}) {
    const call = async <M extends GatewayMethod>(
      method: M,
      params: GatewayParams<M>,
    ): Promise<GatewayResult<M>> => this.call(method, params) as Promise<GatewayResult<M>>;
    this.gateway = {
      call,
      subscribe: (listener) => {
        this.listeners.add(listener);
        return () => this.listeners.delete(listener);
      },
    };
  }

  /** The context to pass to `plugin.start`. */
  context(plugin: ChannelPlugin): ChannelContext {
    this.plugin = plugin;
    return {
      receive: async (message) => {
        this.received.push(message);
        const task = this.handle(message).catch(() => {});
        this.work.add(task);
        void task.finally(() => this.work.delete(task));
      },
      threadBindings: createThreadBindingAccess(this.bindings, plugin.id),
      pairing: createPairingAccess(this.bindings, plugin.id),
      commands: [],
      log: silentLogger,
      gateway: this.gateway,
      signal: this.controller.signal,
    };
  }

  /** Adds a session directly (e.g. a sub-agent for the owner panel). */
  addSession(session: Partial<SessionRecord> & { key: string }): SessionRecord {
    const now = Date.now();
    const record: SessionRecord = {
      sessionId: `s-${this.sessions.size + 1}`,
      agentId: 'main',
      kind: 'other',
      createdAt: now,
      updatedAt: now,
      ...session,
    };
    this.sessions.set(record.key, record);
    return record;
  }

  /** Emits a gateway event to the plugin. */
  emit(event: GatewayEvent): void {
    this.events.push(event);
    for (const listener of this.listeners) listener(event);
  }

  /** Waits for every reply in flight. */
  async idle(): Promise<void> {
    while (this.work.size > 0) await Promise.all([...this.work]);
  }

  /** The session key the fake derives for an inbound chat. */
  static keyOf(message: Pick<InboundMessage, 'chat'>): string {
    return message.chat.type === 'direct'
      ? `agent:main:webchat:dm:${message.chat.id}`
      : `agent:main:webchat:group:${message.chat.id}`;
  }

  private append(key: string, message: TranscriptMessage): void {
    const list = this.transcripts.get(key) ?? [];
    list.push({ ...message, seq: list.length + 1 });
    this.transcripts.set(key, list);
  }

  private async handle(message: InboundMessage): Promise<void> {
    const key = FakeHost.keyOf(message);
    const now = Date.now();
    const session =
      this.sessions.get(key) ??
      this.addSession({
        key,
        kind: message.chat.type === 'direct' ? 'dm' : 'group',
        chatType: message.chat.type,
        channel: 'webchat',
        createdAt: now,
      });
    session.deliveryContext = { channel: 'webchat', to: message.chat.id, accountId: message.accountId };
    session.updatedAt = now;
    this.append(key, { role: 'user', content: message.text, timestamp: now, sender: message.sender });
    if (!message.mentionsBot) return;
    const text = (this.options.reply ?? ((m) => `You said: ${m.text}`))(message);
    if (text === undefined) return;
    const runId = `run-${++this.runCounter}`;
    const stream = this.options.stream ?? true;
    session.status = 'running';
    session.startedAt = Date.now();
    if (stream) {
      this.emit({ type: 'run.started', runId, sessionKey: key });
      for (const piece of text.match(/\S+\s*/g) ?? []) {
        await sleep(this.options.deltaDelayMs ?? 15);
        this.emit({ type: 'run.delta', runId, sessionKey: key, text: piece });
      }
    }
    const sent = await this.plugin!.send(session.deliveryContext, { text });
    this.append(key, {
      role: 'assistant',
      content: [{ type: 'text', text }],
      timestamp: Date.now(),
      platformMessageId: sent.messageId,
    });
    session.status = 'done';
    session.endedAt = Date.now();
    session.usage = { inputTokens: 12, outputTokens: text.length, totalTokens: 12 + text.length };
    if (stream) this.emit({ type: 'run.ended', runId, sessionKey: key, status: 'done' });
  }

  private async call(method: GatewayMethod, params: unknown): Promise<unknown> {
    switch (method) {
      case 'session.status': {
        const { key } = params as { key: string };
        const session = this.sessions.get(key);
        if (!session) throw new ColloquyError('SESSION_NOT_FOUND', `No session "${key}".`);
        return { session, status: session.status ?? 'idle', queueDepth: 0 };
      }
      case 'sessions.list': {
        const { limit = 50 } = params as { limit?: number };
        const all = [...this.sessions.values()].sort((a, b) => b.updatedAt - a.updatedAt);
        return { sessions: all.slice(0, limit), total: all.length };
      }
      case 'chat.history': {
        const { key, limit = 20 } = params as { key: string; limit?: number };
        const list = this.transcripts.get(key) ?? [];
        return { sessionKey: key, messages: list.slice(-limit), total: list.length };
      }
      default:
        throw new ColloquyError('NOT_SUPPORTED', `The fake gateway does not serve ${method}.`);
    }
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
