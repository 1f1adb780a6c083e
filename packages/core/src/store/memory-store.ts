import { ColloquyError } from '../errors/colloquy-error.js';
import type {
  InboxEntry,
  McpTokenRecord,
  OutboxEntry,
  PairingRecord,
  RunRecord,
  SessionChangeKind,
  SessionRecord,
  SessionWatch,
  StoredMessage,
  ThreadBinding,
  TranscriptMessage,
} from '../interfaces/records.js';
import type {
  McpTokenListQuery,
  MessageSearchHit,
  MessageSearchQuery,
  MessageSearchResult,
  OutboxListQuery,
  PairingListQuery,
  RunListQuery,
  SessionChanges,
  SessionListQuery,
  SessionPatch,
  TailOptions,
  WatchListQuery,
} from '../interfaces/store.js';
import { serializeRecord } from './record-rows.js';
import { scoreSearchWords, searchableText, searchTerms, searchWords } from './search-text.js';
import {
  SerializedStore,
  type SerializedStoreOptions,
  type SynchronousStoreEngine,
  type SynchronousStoreOperations,
} from './serialized-store.js';
import {
  changeWindowStart,
  isPatchChange,
  isStatusChange,
  SESSION_CHANGE_WINDOW,
  summarizeChanges,
} from './session-changes.js';
import { compareSessionsNewestFirst, matchesSessionQuery } from './session-query.js';

type Undo = () => void;

const outboxId = (childSessionKey: string, runId: string) => `${childSessionKey}\u0000${runId}`;
const bindingId = (channel: string, accountId: string, threadId: string) =>
  `${channel}\u0000${accountId}\u0000${threadId}`;
const pairingId = (channel: string, accountId: string, peerId: string) =>
  `${channel}\u0000${accountId}\u0000${peerId}`;
const watchId = (watcherKey: string, targetKey: string) => `${watcherKey}\u0000${targetKey}`;

/** One logged change of a session (see `summarizeChanges`). */
interface LoggedChange {
  version: number;
  kind: SessionChangeKind;
}

/**
 * A Store held in memory: the reference implementation of the Store contract, for tests and
 * for embedding without persistence. It keeps each record as its JSON, read back, as the SQL stores
 * do: what JSON cannot hold (a cycle, a BigInt, nesting too deep to serialise) is refused with
 * `INVALID_ARGUMENT`, and values are copied in and out, as a database would.
 *
 * @example
 * ```ts
 * const store = new MemoryStore();
 * await store.putSession({ key: 'agent:main:main', sessionId: 'id-1', agentId: 'main', kind: 'main', createdAt: 0, updatedAt: 0 });
 * ```
 */
export class MemoryStore extends SerializedStore {
  /**
   * An empty store.
   *
   * @param options - see `SerializedStoreOptions` (`detectNestedCalls`, default true)
   */
  constructor(options: SerializedStoreOptions = {}) {
    super(new MemoryTables(), options);
  }

  /** `memory:<sessionId>`: the transcript lives only in this process. */
  transcriptLocator(session: SessionRecord): string {
    return `memory:${session.sessionId}`;
  }

  /** Nothing to release: the tables are garbage-collected with the store. */
  protected closeEngine(): void {}
}

/** The tables of a MemoryStore, with an undo log for the open transaction. */
class MemoryTables implements SynchronousStoreEngine, SynchronousStoreOperations {
  private readonly sessions = new Map<string, SessionRecord>();
  private readonly sessionKeysById = new Map<string, string>();
  private readonly transcripts = new Map<string, StoredMessage[]>();
  private readonly runs = new Map<string, RunRecord>();
  private readonly outbox = new Map<string, OutboxEntry>();
  private readonly inboxes = new Map<string, Map<string, InboxEntry>>();
  private readonly bindings = new Map<string, ThreadBinding>();
  private readonly pairings = new Map<string, PairingRecord>();
  /** MCP tokens by id. */
  private readonly mcpTokens = new Map<string, McpTokenRecord>();
  /** Each session's logged (`status`, `patch`) changes, oldest first; messages are not logged. */
  private readonly changeLogs = new Map<string, readonly LoggedChange[]>();
  private readonly watches = new Map<string, SessionWatch>();
  /** The words search indexes, per stored message (stored messages are never changed in place). */
  private readonly indexedWords = new WeakMap<StoredMessage, readonly string[]>();
  private undoLog: Undo[] | undefined;

  get operations(): SynchronousStoreOperations {
    return this;
  }

  begin(): void {
    this.undoLog = [];
  }

  commit(): void {
    this.undoLog = undefined;
  }

  rollback(): void {
    const log = this.undoLog ?? [];
    this.undoLog = undefined;
    for (let i = log.length - 1; i >= 0; i--) log[i]!();
  }

  // --- sessions ---

  getSession(key: string): SessionRecord | undefined {
    return copyOut(this.sessions.get(key));
  }

  putSession(record: SessionRecord): void {
    this.assertSessionIdFree(record.sessionId, record.key);
    const previous = this.sessions.get(record.key);
    const { stateVersion: _ignored, ...rest } = copyIn(record, 'session');
    const next: SessionRecord = previous?.stateVersion
      ? { ...rest, stateVersion: previous.stateVersion }
      : rest;
    this.setSession(record.key, next, previous);
    if (isPatchChange(previous, next)) this.noteChange(record.key, 'patch', 1);
  }

  patchSession(key: string, patch: SessionPatch): SessionRecord {
    const previous = this.sessions.get(key);
    if (!previous) throw sessionNotFound(key);
    const next: Record<string, unknown> = { ...previous };
    for (const [field, value] of Object.entries(patch)) {
      if (field === 'key' || field === 'stateVersion' || value === undefined) continue;
      if (value === null) delete next[field];
      else next[field] = value;
    }
    const record = copyIn(next as unknown as SessionRecord, 'session');
    this.assertSessionIdFree(record.sessionId, key);
    this.setSession(key, record, previous);
    if (isPatchChange(previous, record, Object.keys(patch))) this.noteChange(key, 'patch', 1);
    return copyOut(this.sessions.get(key)!);
  }

  deleteSession(key: string): boolean {
    const previous = this.sessions.get(key);
    if (!previous) return false;
    this.setSession(key, undefined, previous);
    this.replaceMapEntry(this.transcripts, key, undefined);
    this.replaceMapEntry(this.inboxes, key, undefined);
    this.replaceMapEntry(this.changeLogs, key, undefined);
    for (const [id, binding] of this.bindings) {
      if (binding.sessionKey === key) this.replaceMapEntry(this.bindings, id, undefined);
    }
    for (const [id, watch] of this.watches) {
      if (watch.watcherKey === key || watch.targetKey === key)
        this.replaceMapEntry(this.watches, id, undefined);
    }
    return true;
  }

  listSessions(query: SessionListQuery = {}): SessionRecord[] {
    const rows = this.matchingSessions(query);
    return page(rows, query.limit, query.offset).map((s) => copyOut(s));
  }

  countSessions(query: SessionListQuery = {}): number {
    return this.matchingSessions(query).length;
  }

  // --- transcripts ---

  appendMessages(sessionKey: string, messages: readonly TranscriptMessage[]): StoredMessage[] {
    if (!this.sessions.has(sessionKey)) throw sessionNotFound(sessionKey);
    const previous = this.transcripts.get(sessionKey);
    const transcript = previous ? [...previous] : [];
    let seq = transcript.at(-1)?.seq ?? 0;
    const stored = messages.map((m) => ({ ...copyIn(m, 'transcript message'), seq: ++seq }));
    transcript.push(...stored);
    this.replaceMapEntry(this.transcripts, sessionKey, transcript);
    this.noteChange(sessionKey, 'message', stored.length);
    return stored.map((m) => copyOut(m));
  }

  readTail(sessionKey: string, limit: number, options: TailOptions = {}): StoredMessage[] {
    const transcript = this.transcripts.get(sessionKey) ?? [];
    if (limit <= 0) return [];
    let end = transcript.length;
    if (options.beforeSeq !== undefined) {
      const before = options.beforeSeq;
      end = lowerBound(transcript, (m) => m.seq >= before);
    }
    end = Math.max(0, end - wholeOffset(options.offset));
    const after = options.afterSeq;
    const start = after === undefined ? 0 : lowerBound(transcript, (m) => m.seq > after);
    if (end <= start) return [];
    return transcript.slice(Math.max(start, end - limit), end).map((m) => copyOut(m));
  }

  countMessages(sessionKey: string): number {
    return this.transcripts.get(sessionKey)?.length ?? 0;
  }

  searchMessages(query: MessageSearchQuery): MessageSearchResult {
    const terms = searchTerms(query.text);
    if (terms.length === 0) return { hits: [], total: 0 };
    const scored: Array<MessageSearchHit & { score: number }> = [];
    for (const session of this.matchingSessions({ ...query, includeArchived: true, limit: undefined })) {
      for (const message of this.transcripts.get(session.key) ?? []) {
        const score = scoreSearchWords(this.wordsOf(message), terms);
        if (score > 0) scored.push({ sessionKey: session.key, message, score });
      }
    }
    scored.sort(
      (a, b) =>
        b.score - a.score ||
        (a.sessionKey < b.sessionKey ? -1 : a.sessionKey > b.sessionKey ? 1 : 0) ||
        b.message.seq - a.message.seq,
    );
    const hits = page(scored, query.limit, query.offset).map(({ sessionKey, message }) => ({
      sessionKey,
      message: copyOut(message),
    }));
    return { hits, total: scored.length };
  }

  setMessagePlatformId(sessionKey: string, seq: number, platformMessageId: string): void {
    const transcript = this.transcripts.get(sessionKey);
    const index = transcript ? lowerBound(transcript, (m) => m.seq >= seq) : -1;
    const message = transcript?.[index];
    if (!transcript || message?.seq !== seq) return;
    const next = [...transcript];
    next[index] = { ...message, platformMessageId };
    this.replaceMapEntry(this.transcripts, sessionKey, next);
  }

  // --- runs ---

  createRun(run: RunRecord): void {
    if (this.runs.has(run.runId)) {
      throw new ColloquyError('CONFLICT', `Run "${run.runId}" already exists; run ids must be unique.`, {
        runId: run.runId,
      });
    }
    this.replaceMapEntry(this.runs, run.runId, copyIn(run, 'run'));
    if (isStatusChange(undefined, run.status)) this.noteChange(run.sessionKey, 'status', 1);
  }

  getRun(runId: string): RunRecord | undefined {
    return copyOut(this.runs.get(runId));
  }

  updateRun(runId: string, patch: Partial<Omit<RunRecord, 'runId'>>): RunRecord {
    const previous = this.runs.get(runId);
    if (!previous) {
      throw new ColloquyError('RUN_NOT_FOUND', `No run "${runId}".`, { runId });
    }
    const next = copyIn({ ...previous, ...withoutUndefined(patch), runId }, 'run');
    this.replaceMapEntry(this.runs, runId, next);
    if (isStatusChange(previous.status, next.status)) this.noteChange(next.sessionKey, 'status', 1);
    return copyOut(next);
  }

  listRuns(query: RunListQuery = {}): RunRecord[] {
    const rows = [...this.runs.values()]
      .filter(
        (r) =>
          (query.sessionKey === undefined || r.sessionKey === query.sessionKey) &&
          (query.spawnedBy === undefined || r.spawnedBy === query.spawnedBy) &&
          (query.statuses === undefined || query.statuses.includes(r.status)),
      )
      .sort((a, b) => b.createdAt - a.createdAt || (a.runId < b.runId ? 1 : -1));
    const limited = query.limit === undefined ? rows : rows.slice(0, Math.max(0, query.limit));
    return limited.map((r) => copyOut(r));
  }

  // --- announce outbox ---

  putOutbox(entry: OutboxEntry): boolean {
    const id = outboxId(entry.childSessionKey, entry.runId);
    if (this.outbox.has(id)) return false;
    this.replaceMapEntry(this.outbox, id, copyIn(entry, 'outbox entry'));
    return true;
  }

  getOutbox(childSessionKey: string, runId: string): OutboxEntry | undefined {
    return copyOut(this.outbox.get(outboxId(childSessionKey, runId)));
  }

  updateOutbox(
    childSessionKey: string,
    runId: string,
    patch: Partial<Omit<OutboxEntry, 'childSessionKey' | 'runId'>>,
  ): OutboxEntry {
    const id = outboxId(childSessionKey, runId);
    const previous = this.outbox.get(id);
    if (!previous) {
      throw new ColloquyError('STORE_ERROR', `No outbox entry for run "${runId}" of "${childSessionKey}".`, {
        childSessionKey,
        runId,
      });
    }
    const next = copyIn({ ...previous, ...withoutUndefined(patch), childSessionKey, runId }, 'outbox entry');
    this.replaceMapEntry(this.outbox, id, next);
    return copyOut(next);
  }

  listOutbox(query: OutboxListQuery = {}): OutboxEntry[] {
    const statuses = query.statuses ?? ['pending'];
    const rows = [...this.outbox.values()]
      .filter(
        (e) =>
          statuses.includes(e.status) &&
          (query.requesterSessionKey === undefined || e.requesterSessionKey === query.requesterSessionKey) &&
          (query.dueBefore === undefined || e.nextAttemptAt <= query.dueBefore),
      )
      .sort((a, b) => a.createdAt - b.createdAt);
    const limited = query.limit === undefined ? rows : rows.slice(0, Math.max(0, query.limit));
    return limited.map((e) => copyOut(e));
  }

  // --- watching ---

  readChanges(sessionKey: string, sinceVersion: number): SessionChanges | undefined {
    const session = this.sessions.get(sessionKey);
    if (!session) return undefined;
    const toVersion = session.stateVersion ?? 0;
    const from = changeWindowStart(sinceVersion, toVersion);
    const logged = (this.changeLogs.get(sessionKey) ?? []).filter((change) => change.version > from);
    return summarizeChanges(
      sinceVersion,
      toVersion,
      logged.map((change) => [change.kind, 1] as const),
    );
  }

  putWatch(watch: SessionWatch): void {
    this.replaceMapEntry(
      this.watches,
      watchId(watch.watcherKey, watch.targetKey),
      copyIn(watch, 'session watch'),
    );
  }

  listWatches(query: WatchListQuery = {}): SessionWatch[] {
    const rows = [...this.watches.values()]
      .filter(
        (w) =>
          (query.watcherKey === undefined || w.watcherKey === query.watcherKey) &&
          (query.targetKey === undefined || w.targetKey === query.targetKey) &&
          (!query.due || (this.sessions.get(w.targetKey)?.stateVersion ?? 0) > w.afterVersion),
      )
      .sort((a, b) => a.createdAt - b.createdAt);
    return page(rows, query.limit, undefined).map((w) => copyOut(w));
  }

  deleteWatch(watcherKey: string, targetKey: string, id?: string): boolean {
    const key = watchId(watcherKey, targetKey);
    const watch = this.watches.get(key);
    if (!watch || (id !== undefined && watch.id !== id)) return false;
    this.replaceMapEntry(this.watches, key, undefined);
    return true;
  }

  // --- session inbox ---

  putInbox(entry: InboxEntry): boolean {
    const inbox = this.inboxes.get(entry.sessionKey);
    if (inbox?.has(entry.id)) return false;
    const next = new Map(inbox);
    next.set(entry.id, copyIn(entry, 'inbox entry'));
    this.replaceMapEntry(this.inboxes, entry.sessionKey, next);
    return true;
  }

  listInbox(sessionKey: string): InboxEntry[] {
    return [...(this.inboxes.get(sessionKey)?.values() ?? [])]
      .filter((e) => e.consumedAt === undefined)
      .sort((a, b) => a.createdAt - b.createdAt)
      .map((e) => copyOut(e));
  }

  listInboxSessionKeys(): string[] {
    return [...this.inboxes]
      .filter(([, inbox]) => [...inbox.values()].some((e) => e.consumedAt === undefined))
      .map(([key]) => key)
      .sort();
  }

  consumeInbox(sessionKey: string, ids: readonly string[], at: number): void {
    const inbox = this.inboxes.get(sessionKey);
    if (!inbox) return;
    const next = new Map(inbox);
    for (const id of ids) {
      const entry = next.get(id);
      if (entry && entry.consumedAt === undefined) next.set(id, { ...entry, consumedAt: at });
    }
    this.replaceMapEntry(this.inboxes, sessionKey, next);
  }

  // --- thread bindings ---

  putThreadBinding(binding: ThreadBinding): void {
    this.replaceMapEntry(
      this.bindings,
      bindingId(binding.channel, binding.accountId, binding.threadId),
      copyIn(binding, 'thread binding'),
    );
  }

  getThreadBinding(channel: string, accountId: string, threadId: string): ThreadBinding | undefined {
    return copyOut(this.bindings.get(bindingId(channel, accountId, threadId)));
  }

  listThreadBindings(query: { sessionKey?: string; channel?: string } = {}): ThreadBinding[] {
    return [...this.bindings.values()]
      .filter(
        (b) =>
          (query.sessionKey === undefined || b.sessionKey === query.sessionKey) &&
          (query.channel === undefined || b.channel === query.channel),
      )
      .map((b) => copyOut(b));
  }

  deleteThreadBinding(channel: string, accountId: string, threadId: string): boolean {
    const id = bindingId(channel, accountId, threadId);
    if (!this.bindings.has(id)) return false;
    this.replaceMapEntry(this.bindings, id, undefined);
    return true;
  }

  // --- pairing ---

  putPairing(record: PairingRecord): void {
    this.replaceMapEntry(
      this.pairings,
      pairingId(record.channel, record.accountId, record.peerId),
      copyIn(record, 'pairing'),
    );
  }

  getPairing(channel: string, accountId: string, peerId: string): PairingRecord | undefined {
    return copyOut(this.pairings.get(pairingId(channel, accountId, peerId)));
  }

  listPairings(query: PairingListQuery): PairingRecord[] {
    return [...this.pairings.values()]
      .filter(
        (p) =>
          p.channel === query.channel &&
          (query.accountId === undefined || p.accountId === query.accountId) &&
          (query.status === undefined || p.status === query.status) &&
          (query.code === undefined || (p.status === 'pending' && p.code === query.code)),
      )
      .sort((a, b) => a.createdAt - b.createdAt)
      .map((p) => copyOut(p));
  }

  deletePairing(channel: string, accountId: string, peerId: string): boolean {
    const id = pairingId(channel, accountId, peerId);
    if (!this.pairings.has(id)) return false;
    this.replaceMapEntry(this.pairings, id, undefined);
    return true;
  }

  // --- MCP access tokens ---

  putMcpToken(record: McpTokenRecord): void {
    if (this.mcpTokens.has(record.id) || this.getMcpTokenByHash(record.hash)) {
      throw new ColloquyError(
        'CONFLICT',
        'An MCP token with this id or hash is already stored; issue a new token.',
        {
          id: record.id,
        },
      );
    }
    this.replaceMapEntry(this.mcpTokens, record.id, copyIn(record, 'MCP token'));
  }

  getMcpTokenByHash(hash: string): McpTokenRecord | undefined {
    for (const token of this.mcpTokens.values()) if (token.hash === hash) return copyOut(token);
    return undefined;
  }

  listMcpTokens(query: McpTokenListQuery = {}): McpTokenRecord[] {
    return [...this.mcpTokens.values()]
      .filter(
        (t) =>
          (query.agentId === undefined || t.agentId === query.agentId) &&
          (query.includeRevoked === true || t.revokedAt === undefined),
      )
      .sort((a, b) => a.createdAt - b.createdAt)
      .map((t) => copyOut(t));
  }

  revokeMcpToken(id: string, at: number): boolean {
    const token = this.mcpTokens.get(id);
    if (!token || token.revokedAt !== undefined) return false;
    this.replaceMapEntry(this.mcpTokens, id, { ...token, revokedAt: at });
    return true;
  }

  // --- internals ---

  /** The words search indexes for a stored message, computed at its first search. */
  private wordsOf(message: StoredMessage): readonly string[] {
    let words = this.indexedWords.get(message);
    if (words === undefined) {
      const text = searchableText(message);
      words = text === undefined ? [] : searchWords(text);
      this.indexedWords.set(message, words);
    }
    return words;
  }

  private matchingSessions(query: SessionListQuery): SessionRecord[] {
    const now = query.now ?? Date.now();
    const byId = query.sessionId === undefined ? undefined : this.sessionKeysById.get(query.sessionId);
    const keys =
      query.sessionId !== undefined
        ? byId === undefined
          ? []
          : [byId]
        : query.keys && query.alsoKeys
          ? [...query.keys, ...query.alsoKeys]
          : query.keys;
    const candidates =
      keys === undefined ? this.sessions.values() : keys.flatMap((k) => this.sessions.get(k) ?? []).values();
    const seen = new Set<string>();
    const rows: SessionRecord[] = [];
    for (const s of candidates) {
      if (seen.has(s.key) || !matchesSessionQuery(s, query, now)) continue;
      seen.add(s.key);
      rows.push(s);
    }
    return rows.sort(compareSessionsNewestFirst);
  }

  private setSession(
    key: string,
    record: SessionRecord | undefined,
    previous: SessionRecord | undefined,
  ): void {
    if (previous && previous.sessionId !== record?.sessionId) {
      this.replaceMapEntry(this.sessionKeysById, previous.sessionId, undefined);
    }
    if (record) this.replaceMapEntry(this.sessionKeysById, record.sessionId, key);
    this.replaceMapEntry(this.sessions, key, record);
  }

  /** Counts `n` changes of `kind` on a session (a missing session has nothing to count). */
  private noteChange(key: string, kind: SessionChangeKind, n: number): void {
    const session = this.sessions.get(key);
    if (!session || n <= 0) return;
    const version = (session.stateVersion ?? 0) + n;
    this.replaceMapEntry(this.sessions, key, { ...session, stateVersion: version });
    if (kind === 'message') return;
    const log = (this.changeLogs.get(key) ?? []).filter((c) => c.version > version - SESSION_CHANGE_WINDOW);
    this.replaceMapEntry(this.changeLogs, key, [...log, { version, kind }]);
  }

  /** Sets or deletes one map entry, logging how to undo it inside a transaction. */
  private replaceMapEntry<K, V>(map: Map<K, V>, key: K, value: V | undefined): void {
    if (this.undoLog) {
      const had = map.has(key);
      const old = map.get(key);
      this.undoLog.push(() => {
        if (had) map.set(key, old as V);
        else map.delete(key);
      });
    }
    if (value === undefined) map.delete(key);
    else map.set(key, value);
  }

  private assertSessionIdFree(sessionId: string, key: string): void {
    const owner = this.sessionKeysById.get(sessionId);
    if (owner !== undefined && owner !== key) {
      throw new ColloquyError(
        'CONFLICT',
        `sessionId "${sessionId}" already belongs to session "${owner}"; session ids must be unique.`,
        { sessionId, key, owner },
      );
    }
  }
}

function sessionNotFound(key: string): ColloquyError {
  return new ColloquyError('SESSION_NOT_FOUND', `No session "${key}".`, { key });
}

/**
 * The copy of a record the store keeps: its JSON read back, as a SQL store keeps it.
 *
 * @throws `INVALID_ARGUMENT` when JSON cannot hold the record (see `serializeRecord`)
 */
function copyIn<T>(value: T, what: string): T {
  return JSON.parse(serializeRecord(value, what)) as T;
}

/** A copy of a kept record for a caller (kept records are plain JSON, so JSON copies them whole). */
function copyOut<T>(value: T): T {
  return value === undefined ? value : (JSON.parse(JSON.stringify(value)) as T);
}

function withoutUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}

/** A whole, non-negative offset: fractions round down, anything else not positive is 0. */
function wholeOffset(offset: number | undefined): number {
  return offset !== undefined && offset > 0 ? Math.floor(offset) : 0;
}

/** `rows` after skipping `offset` and keeping at most `limit` (absent: no limit). */
function page<T>(rows: readonly T[], limit: number | undefined, offset: number | undefined): T[] {
  const start = wholeOffset(offset);
  return limit === undefined ? rows.slice(start) : rows.slice(start, start + Math.max(0, limit));
}

/** Index of the first element for which `pred` holds, in an array where it flips false -> true once. */
function lowerBound<T>(items: readonly T[], pred: (item: T) => boolean): number {
  let lo = 0;
  let hi = items.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (pred(items[mid]!)) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}
