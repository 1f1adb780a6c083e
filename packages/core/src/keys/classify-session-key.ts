/**
 * What a key says about its session: its kind, its agent, and the channel shown in lists.
 */
import type { SessionKind, SessionRecord } from '../interfaces/records.js';
import { type ParsedSessionKey, parseSessionKey } from './session-key.js';

/** Options of `classifySessionKey`. */
export interface ClassifyOptions {
  /** `session.mainKey`; default `main`. */
  mainKey?: string;
}

/**
 * The kind of a session, from its key alone.
 *
 * - `main`: the alias `main` or `agent:<a>:<mainKey>` (and its threads);
 * - `dm`: a direct chat other than main; `group`: a group or a channel (and their threads/topics);
 * - `subagent`, `cron`, `hook`, `node` by their forms; everything else (also reserved and invalid
 *   keys) is `other`, so a filter of `other` never matches `dm` or `subagent` sessions.
 *
 * @param key - a key in any spelling
 * @param opts - `mainKey` (default `main`)
 * @returns the session kind
 */
export function classifySessionKey(key: string, opts: ClassifyOptions = {}): SessionKind {
  const parsed = parseSessionKey(key);
  return parsed.ok ? kindOf(parsed.key, opts.mainKey ?? 'main') : 'other';
}

function kindOf(key: ParsedSessionKey, mainKey: string): SessionKind {
  switch (key.type) {
    case 'alias':
      return key.alias === 'main' ? 'main' : 'other';
    case 'main':
      return key.mainKey === mainKey.trim().toLowerCase() ? 'main' : 'other';
    case 'dm':
      return 'dm';
    case 'group':
      return 'group';
    case 'subagent':
      return 'subagent';
    case 'cron':
      return 'cron';
    case 'hook':
      return 'hook';
    case 'node':
      return 'node';
    case 'other':
      return 'other';
  }
}

/**
 * The agent id a key belongs to, when the key names one (`agent:<agentId>:...`).
 *
 * @param key - a key in any spelling
 * @returns the lower-case agent id, or `undefined` for aliases, `cron:`/`hook:`/`node-` keys and
 *   keys that do not parse
 */
export function agentIdFromSessionKey(key: string): string | undefined {
  const parsed = parseSessionKey(key);
  if (!parsed.ok) return undefined;
  const k = parsed.key;
  return 'agentId' in k ? k.agentId : undefined;
}

/**
 * The `channel` field of a session row: groups show the channel recorded on the session, direct
 * chats (and main) the last channel used, cron/hook/node sessions `internal`; else `unknown`.
 *
 * @param session - the session record (its `kind`, `chatType`, `channel`, `lastChannel`, `key`)
 * @returns a channel id, `internal` or `unknown`
 */
export function deriveChannelField(
  session: Pick<SessionRecord, 'key' | 'kind' | 'channel' | 'chatType' | 'lastChannel' | 'deliveryContext'>,
): string {
  const kind = session.kind;
  if (kind === 'cron' || kind === 'hook' || kind === 'node') return 'internal';
  const parsed = parseSessionKey(session.key);
  const keyChannel = parsed.ok && 'channel' in parsed.key ? parsed.key.channel : undefined;
  if (kind === 'group' || session.chatType === 'group' || session.chatType === 'channel') {
    return session.channel ?? keyChannel ?? 'unknown';
  }
  if (kind === 'dm' || kind === 'main' || session.chatType === 'direct') {
    return session.lastChannel ?? session.deliveryContext?.channel ?? keyChannel ?? 'unknown';
  }
  return 'unknown';
}
