/**
 * Display keys and internal keys: the `main` alias, `global` under `session.scope = "global"`, and
 * the reserved keys that are never listed.
 */
import { ColloquyError } from '../errors/colloquy-error.js';
import type { SessionKind } from '../interfaces/records.js';
import { classifySessionKey } from './classify-session-key.js';
import {
  formatSessionKey,
  normalizeSessionKey,
  type ParsedSessionKey,
  parseSessionKey,
} from './session-key.js';

/** Who is looking at a key: the current agent, its main key and the session scope. */
export interface KeyContext {
  /** The current agent's id. */
  agentId: string;
  /** `session.mainKey` (default `main`). */
  mainKey: string;
  /** `session.scope`: with `global`, the key `global` aliases the main session. */
  scope: 'per-sender' | 'global';
}

/**
 * The internal main key of the context's agent: `agent:<agentId>:<mainKey>`.
 *
 * @param ctx - the key context
 * @returns the normalised main key
 */
export function mainSessionKey(ctx: KeyContext): string {
  return formatSessionKey({ type: 'main', agentId: ctx.agentId, mainKey: ctx.mainKey });
}

/**
 * Turns what a caller typed into the internal key: normalises it, maps `main` (and `global` when
 * `ctx.scope` is `global`) to `agent:<agentId>:<mainKey>`. Never throws.
 *
 * @param raw - a key in any spelling, or an alias
 * @param ctx - the current agent's key context
 * @returns the normalised internal key
 *
 * @example
 * ```ts
 * resolveSessionKeyAlias(' MAIN ', { agentId: 'main', mainKey: 'main', scope: 'per-sender' }); // 'agent:main:main'
 * ```
 */
export function resolveSessionKeyAlias(raw: string, ctx: KeyContext): string {
  const key = normalizeSessionKey(raw);
  if (key === 'main' || (key === 'global' && ctx.scope === 'global')) return mainSessionKey(ctx);
  return key;
}

/**
 * The form tools show: the context agent's own main key becomes `main`; everything else is the
 * normalised internal key. With scope `global`, `global` is also shown as `main`.
 *
 * @param key - an internal key (any spelling)
 * @param ctx - the current agent's key context
 * @returns the display key
 */
export function toDisplayKey(key: string, ctx: KeyContext): string {
  const internal = resolveSessionKeyAlias(key, ctx);
  return internal === mainSessionKey(ctx) ? 'main' : internal;
}

/**
 * True for the reserved keys `global` and `unknown` (any spelling), which are never listed nor
 * accessible. Resolve aliases first: under scope `global`, `resolveSessionKeyAlias('global')` is the
 * main key and not reserved.
 *
 * @param key - a key in any spelling
 */
export function isReservedSessionKey(key: string): boolean {
  const normalized = normalizeSessionKey(key);
  return normalized === 'global' || normalized === 'unknown';
}

/** A key resolved for a tool call, or the reason it cannot be used. */
export type SessionKeyResolution =
  | { ok: true; key: string; displayKey: string; kind: SessionKind; parsed: ParsedSessionKey }
  | { ok: false; error: ColloquyError };

/**
 * Validates and resolves a key received from a model or a user, in one step: parse, apply the
 * aliases, refuse reserved keys. Never throws.
 *
 * @param raw - the key as received (any type)
 * @param ctx - the current agent's key context
 * @returns `{ ok: true, key, displayKey, kind, parsed }` with the internal key, or `{ ok: false, error }`
 *   with an `INVALID_ARGUMENT` error whose message tells the caller what to pass instead
 *
 * @example
 * ```ts
 * const resolved = tryResolveSessionKey(args.sessionKey, ctx);
 * if (!resolved.ok) return { status: 'error', error: resolved.error.message };
 * ```
 */
export function tryResolveSessionKey(raw: unknown, ctx: KeyContext): SessionKeyResolution {
  const parsed = parseSessionKey(raw);
  if (!parsed.ok) return parsed;
  const key = resolveSessionKeyAlias(formatSessionKey(parsed.key), ctx);
  if (isReservedSessionKey(key)) {
    return {
      ok: false,
      error: new ColloquyError(
        'INVALID_ARGUMENT',
        `"${key}" is a reserved key, not a session; use "main" for the main session or a key from sessions_list.`,
        { key },
      ),
    };
  }
  const resolved = parseSessionKey(key);
  if (!resolved.ok) return resolved;
  return {
    ok: true,
    key,
    displayKey: toDisplayKey(key, ctx),
    kind: classifySessionKey(key, { mainKey: ctx.mainKey }),
    parsed: resolved.key,
  };
}
