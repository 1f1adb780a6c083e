/**
 * Session keys: their structured form, parsing (safe on model input), formatting and normalisation.
 *
 * Grammar (segments are separated by `:`; fixed words and agent ids are case-insensitive):
 * ```
 * main | global | unknown                                  bare aliases (global/unknown are reserved)
 * agent:<agentId>:<mainKey>[<thread>]                      an agent's main session
 * agent:<agentId>:dm:<peerId>[<thread>]                    direct chat, dmScope per-peer
 * agent:<agentId>:<channel>:dm:<peerId>[<thread>]          direct chat, dmScope per-channel-peer
 * agent:<agentId>:<channel>:<accountId>:dm:<peerId>[<thread>]   per-account-channel-peer
 * agent:<agentId>:<channel>:group|channel:<chatId>[<thread>]    a group or a channel
 * agent:<agentId>:subagent:<id>                            a spawned sub-agent
 * [agent:<agentId>:]cron:<jobId> | [agent:<agentId>:]hook:<id> | node-<nodeId>
 * <thread> = :thread:<threadId> | :topic:<topicId>
 * ```
 * Anything else that is well-formed is an `other` key. Inside id segments `%`, `:` and control
 * characters are percent-encoded (`%25`, `%3A`, ...), so platform ids containing `:` stay lossless.
 */
import { ColloquyError } from '../errors/colloquy-error.js';

/** A `:thread:<id>` or `:topic:<id>` suffix: a thread or forum topic inside its parent chat. */
export interface ThreadSuffix {
  kind: 'thread' | 'topic';
  id: string;
}

/**
 * A session key in structured form. Agent ids, channel ids, main keys and sub-agent ids are
 * lower-case; platform ids (peers, chats, accounts, threads, jobs, hooks, nodes) keep their case.
 */
export type ParsedSessionKey =
  | { type: 'alias'; alias: 'main' | 'global' | 'unknown' }
  | { type: 'main'; agentId: string; mainKey: string; thread?: ThreadSuffix }
  | {
      type: 'dm';
      agentId: string;
      channel?: string;
      accountId?: string;
      peerId: string;
      thread?: ThreadSuffix;
    }
  | {
      type: 'group';
      agentId: string;
      channel: string;
      chatType: 'group' | 'channel';
      chatId: string;
      thread?: ThreadSuffix;
    }
  | { type: 'subagent'; agentId: string; subagentId: string }
  | { type: 'cron'; agentId?: string; jobId: string }
  | { type: 'hook'; agentId?: string; hookId: string }
  | { type: 'node'; nodeId: string }
  | { type: 'other'; agentId?: string; key: string };

/** The outcome of `parseSessionKey`: the structured key, or an `INVALID_ARGUMENT` error saying why. */
export type SessionKeyParseResult = { ok: true; key: ParsedSessionKey } | { ok: false; error: ColloquyError };

/** The longest accepted session key, in UTF-16 units. */
export const MAX_SESSION_KEY_LENGTH = 1024;

const FIXED_WORDS = new Set([
  'agent',
  'group',
  'channel',
  'dm',
  'thread',
  'topic',
  'subagent',
  'cron',
  'hook',
  'main',
  'global',
  'unknown',
]);

// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it looks for
const CONTROL = /[\u0000-\u001f\u007f]/;

// --- parsing ---

/**
 * Parses a session key into its structured form. Safe on model input: it never throws.
 *
 * @param input - the key as given (any spelling: whitespace and the case of fixed words and agent
 *   ids do not matter); non-strings are refused
 * @returns `{ ok: true, key }`, or `{ ok: false, error }` with an `INVALID_ARGUMENT` `ColloquyError`
 *   whose message says what is wrong with the key
 *
 * @example
 * ```ts
 * const parsed = parseSessionKey(' agent:Main:telegram:GROUP:-100123:topic:7 ');
 * // { ok: true, key: { type: 'group', agentId: 'main', channel: 'telegram', chatType: 'group',
 * //                    chatId: '-100123', thread: { kind: 'topic', id: '7' } } }
 * ```
 */
export function parseSessionKey(input: unknown): SessionKeyParseResult {
  if (typeof input !== 'string')
    return invalid('A session key must be a string; pass a key from sessions_list.');
  const trimmed = input.trim();
  if (trimmed === '') return invalid('The session key is empty; pass a key from sessions_list, or "main".');
  if (trimmed.length > MAX_SESSION_KEY_LENGTH) {
    return invalid(
      `The session key is longer than ${MAX_SESSION_KEY_LENGTH} characters; pass a key from sessions_list.`,
    );
  }
  const segments = trimmed.split(':').map((s) => s.trim());
  if (segments.some((s) => CONTROL.test(s))) {
    return invalid('The session key contains control characters; pass a key from sessions_list.');
  }
  if (segments.some((s) => s === '')) {
    return invalid(
      `The session key "${trimmed}" has an empty part between ":" separators; pass a key from sessions_list.`,
    );
  }
  const first = segments[0] as string;
  const word = first.toLowerCase();

  if (segments.length === 1) {
    if (word === 'main' || word === 'global' || word === 'unknown') return ok({ type: 'alias', alias: word });
    const nodeId = word.startsWith('node-') ? first.slice(5).trim() : '';
    if (nodeId !== '') return ok({ type: 'node', nodeId: decodeId(nodeId) });
    return ok({ type: 'other', key: first });
  }
  if (segments.length === 2 && word === 'cron')
    return ok({ type: 'cron', jobId: decodeId(segments[1] as string) });
  if (segments.length === 2 && word === 'hook')
    return ok({ type: 'hook', hookId: decodeId(segments[1] as string) });
  if (word !== 'agent') {
    const head = FIXED_WORDS.has(word) ? word : first;
    return ok({ type: 'other', key: [head, ...segments.slice(1)].join(':') });
  }
  if (segments.length < 3) {
    return invalid(
      `The session key "${trimmed}" names agent "${segments[1]}" but no session; use agent:<agentId>:<session>, e.g. "agent:${lower(segments[1] as string)}:main".`,
    );
  }
  const agentId = lower(decodeId(segments[1] as string));
  const rest = segments.slice(2);
  const parsed = parseAgentRest(agentId, rest);
  if (parsed) return ok(parsed);
  return ok({ type: 'other', agentId, key: ['agent', encodeId(agentId), ...rest].join(':') });
}

function parseAgentRest(agentId: string, rest: readonly string[]): ParsedSessionKey | undefined {
  if (rest.length === 2) {
    const word = lower(rest[0] as string);
    const id = decodeId(rest[1] as string);
    if (word === 'subagent') return { type: 'subagent', agentId, subagentId: lower(id) };
    if (word === 'cron') return { type: 'cron', agentId, jobId: id };
    if (word === 'hook') return { type: 'hook', agentId, hookId: id };
  }
  if (rest.length >= 3) {
    const marker = lower(rest[rest.length - 2] as string);
    if (marker === 'thread' || marker === 'topic') {
      const chat = parseChat(agentId, rest.slice(0, -2));
      if (chat) return { ...chat, thread: { kind: marker, id: decodeId(rest[rest.length - 1] as string) } };
    }
  }
  return parseChat(agentId, rest);
}

type ChatKey = Extract<ParsedSessionKey, { type: 'main' | 'dm' | 'group' }>;

function parseChat(agentId: string, parts: readonly string[]): ChatKey | undefined {
  const [a, b, c, d] = parts as [string, string?, string?, string?];
  switch (parts.length) {
    case 1:
      return { type: 'main', agentId, mainKey: lower(decodeId(a)) };
    case 2:
      return lower(a) === 'dm' ? { type: 'dm', agentId, peerId: decodeId(b as string) } : undefined;
    case 3: {
      const word = lower(b as string);
      const channel = lower(decodeId(a));
      if (word === 'dm') return { type: 'dm', agentId, channel, peerId: decodeId(c as string) };
      if (word === 'group' || word === 'channel') {
        return { type: 'group', agentId, channel, chatType: word, chatId: decodeId(c as string) };
      }
      return undefined;
    }
    case 4:
      return lower(c as string) === 'dm'
        ? {
            type: 'dm',
            agentId,
            channel: lower(decodeId(a)),
            accountId: decodeId(b as string),
            peerId: decodeId(d as string),
          }
        : undefined;
    default:
      return undefined;
  }
}

// --- formatting ---

/**
 * Formats a structured key as its normalised string. `parseSessionKey(formatSessionKey(k))` gives
 * back `k` for any normalised `k`.
 *
 * @param key - the structured key; ids are trimmed, agent/channel/main-key/sub-agent ids lower-cased
 * @returns the normalised key string
 * @throws ColloquyError `INVALID_ARGUMENT` when an id is empty after trimming
 */
export function formatSessionKey(key: ParsedSessionKey): string {
  switch (key.type) {
    case 'alias':
      return key.alias;
    case 'main':
      return `${agentPrefix(key.agentId)}:${segment(key.mainKey, 'mainKey', true)}${suffix(key.thread)}`;
    case 'dm': {
      const parts = [agentPrefix(key.agentId)];
      if (key.channel !== undefined) parts.push(segment(key.channel, 'channel', true));
      if (key.accountId !== undefined) {
        if (key.channel === undefined) {
          throw new ColloquyError('INVALID_ARGUMENT', 'A dm key with an accountId needs a channel too.', {
            key,
          });
        }
        parts.push(segment(key.accountId, 'accountId'));
      }
      parts.push('dm', segment(key.peerId, 'peerId'));
      return parts.join(':') + suffix(key.thread);
    }
    case 'group':
      return `${agentPrefix(key.agentId)}:${segment(key.channel, 'channel', true)}:${key.chatType}:${segment(key.chatId, 'chatId')}${suffix(key.thread)}`;
    case 'subagent':
      return `${agentPrefix(key.agentId)}:subagent:${segment(key.subagentId, 'subagentId', true)}`;
    case 'cron':
      return `${key.agentId === undefined ? '' : `${agentPrefix(key.agentId)}:`}cron:${segment(key.jobId, 'jobId')}`;
    case 'hook':
      return `${key.agentId === undefined ? '' : `${agentPrefix(key.agentId)}:`}hook:${segment(key.hookId, 'hookId')}`;
    case 'node':
      return `node-${segment(key.nodeId, 'nodeId')}`;
    case 'other':
      return key.key;
  }
}

function agentPrefix(agentId: string): string {
  return `agent:${segment(agentId, 'agentId', true)}`;
}

function suffix(thread: ThreadSuffix | undefined): string {
  return thread === undefined ? '' : `:${thread.kind}:${segment(thread.id, 'threadId')}`;
}

function segment(value: string, name: string, lowerCase = false): string {
  const trimmed = value.trim();
  if (trimmed === '') {
    throw new ColloquyError('INVALID_ARGUMENT', `A session key needs a non-empty ${name}.`, {
      [name]: value,
    });
  }
  return encodeId(lowerCase ? lower(trimmed) : trimmed);
}

// --- normalisation ---

/**
 * The one normal form of a session key: trimmed (also around each `:` part), fixed words and agent
 * ids lower-cased, platform ids untouched. Idempotent. Never throws: a key that does not parse is
 * only trimmed (and every check that parses it will refuse it).
 *
 * @param raw - the key in any spelling
 * @returns the normalised key (`''` for a non-string)
 *
 * @example
 * ```ts
 * normalizeSessionKey(' Agent:MAIN:Discord:Channel:123 '); // 'agent:main:discord:channel:123'
 * ```
 */
export function normalizeSessionKey(raw: string): string {
  const parsed = parseSessionKey(raw);
  if (parsed.ok) return formatSessionKey(parsed.key);
  return typeof raw === 'string' ? raw.trim() : '';
}

// --- helpers ---

function ok(key: ParsedSessionKey): SessionKeyParseResult {
  return { ok: true, key };
}

function invalid(message: string): SessionKeyParseResult {
  return { ok: false, error: new ColloquyError('INVALID_ARGUMENT', message) };
}

function lower(value: string): string {
  return value.toLowerCase();
}

/** Percent-encodes the characters a key segment cannot hold: `%`, `:` and control characters. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it encodes
const ENCODE = /[%:\u0000-\u001f\u007f]/g;
// Decodes only what `encodeId` produces, so other `%` sequences stay literal.
const DECODE = /%(25|3[aA]|[01][0-9a-fA-F]|7[fF])/g;

function encodeId(value: string): string {
  return value.replace(ENCODE, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`);
}

function decodeId(value: string): string {
  return value.replace(DECODE, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)));
}
