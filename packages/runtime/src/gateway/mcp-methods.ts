import { setTimeout as sleep } from 'node:timers/promises';
import { ColloquyError, normalizeSessionKey } from '@colloquy/core';
import type { GatewayResult } from '@colloquy/core/gateway';
import {
  agentConfigFor,
  defaultAgentId,
  isMcpClientSessionKey,
  mcpClientSessionKey,
} from '@colloquy/core/internal';
import type { InboxEntry } from '@colloquy/core/store';
import { newSessionRecord } from '../agent/enqueue-run.js';
import type { RuntimeContext } from '../runtime/runtime-context.js';
import { readParams } from './params.js';

/** The longest `mcp.events` waits. */
export const MCP_EVENTS_MAX_WAIT_MS = 60_000;
/** How often a waiting `mcp.events` looks at the inbox (the store, so any cluster instance's writes count). */
const POLL_MS = 100;

/**
 * `mcp.open`: the session an MCP client acts as, created on first use with the fields a session
 * of its agent gets (sandbox flag, depth 0), labelled for listings.
 *
 * @throws `INVALID_ARGUMENT` for an unknown agent or a name that is not a client name
 */
export async function mcpOpen(ctx: RuntimeContext, params: unknown): Promise<GatewayResult<'mcp.open'>> {
  const p = readParams('mcp.open', params);
  p.only(['agentId', 'name']);
  const agentId = p.string('agentId').trim().toLowerCase();
  const name = p.string('name').trim();
  if (!agentConfigFor(ctx.config, agentId).listed && agentId !== defaultAgentId(ctx.config)) {
    throw new ColloquyError(
      'INVALID_ARGUMENT',
      `mcp.open: no agent "${agentId}" in agents.list; use one of: ${ctx.config.agents.list.map((a) => a.id).join(', ') || defaultAgentId(ctx.config)}.`,
      { agentId },
    );
  }
  const key = mcpClientSessionKey(agentId, name);
  if (!isMcpClientSessionKey(key)) {
    throw new ColloquyError(
      'INVALID_ARGUMENT',
      `mcp.open: "${name}" is not a client name (lower-case letters, digits, "-" and "_").`,
      { name },
    );
  }
  const existing = await ctx.store.getSession(key);
  if (existing) return { session: existing, created: false };
  const record = await newSessionRecord(ctx, key, { displayName: `MCP client ${name}` });
  return ctx.store.transaction(async (tx) => {
    const raced = await tx.getSession(key);
    if (raced) return { session: raced, created: false };
    await tx.putSession(record);
    return { session: (await tx.getSession(key)) ?? record, created: true };
  });
}

/**
 * `mcp.events`: takes an MCP client's unread inbox entries, waiting up to `timeoutMs` for the
 * first. Entries are appended to the client's transcript and consumed in one transaction.
 *
 * @throws `FORBIDDEN` for a session that is not an MCP client's; `SESSION_NOT_FOUND`
 */
export async function mcpEvents(ctx: RuntimeContext, params: unknown): Promise<GatewayResult<'mcp.events'>> {
  const p = readParams('mcp.events', params);
  p.only(['sessionKey', 'timeoutMs', 'limit']);
  const key = await mcpClientSession(ctx, 'mcp.events', p.string('sessionKey'));
  const timeoutMs = Math.min(Math.floor(p.optionalNumber('timeoutMs', 0) ?? 0), MCP_EVENTS_MAX_WAIT_MS);
  const limit = Math.floor(p.optionalNumber('limit', 1, 100) ?? 20);
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const entries = await takeInbox(ctx, key, limit);
    const left = deadline - performance.now();
    if (entries.length > 0 || left <= 0 || !ctx.accepting) return { entries };
    await sleep(Math.min(POLL_MS, left), undefined, { ref: false });
  }
}

/**
 * `mcp.pending`: an MCP client's unread inbox entries, left unread. With `waitForChange` it waits
 * up to `timeoutMs` until the newest unread entry is another than `newestId` (a new event arrived,
 * or the ones seen were taken).
 *
 * @throws `FORBIDDEN` for a session that is not an MCP client's; `SESSION_NOT_FOUND`
 */
export async function mcpPending(
  ctx: RuntimeContext,
  params: unknown,
): Promise<GatewayResult<'mcp.pending'>> {
  const p = readParams('mcp.pending', params);
  p.only(['sessionKey', 'waitForChange', 'newestId', 'timeoutMs', 'limit']);
  const key = await mcpClientSession(ctx, 'mcp.pending', p.string('sessionKey'));
  const waitForChange = p.optionalBoolean('waitForChange') === true;
  const seenNewestId = p.optionalString('newestId');
  const timeoutMs = Math.min(Math.floor(p.optionalNumber('timeoutMs', 0) ?? 0), MCP_EVENTS_MAX_WAIT_MS);
  const limit = Math.floor(p.optionalNumber('limit', 1, 100) ?? 20);
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const unread = await ctx.store.listInbox(key);
    const newestId = unread.at(-1)?.id;
    const left = deadline - performance.now();
    if (!waitForChange || newestId !== seenNewestId || left <= 0 || !ctx.accepting) {
      return {
        entries: unread.slice(0, limit),
        count: unread.length,
        ...(newestId === undefined ? {} : { newestId }),
      };
    }
    await sleep(Math.min(POLL_MS, left), undefined, { ref: false });
  }
}

/** The normalized key of an existing MCP client session, or the method's typed refusal. */
async function mcpClientSession(ctx: RuntimeContext, method: string, sessionKey: string): Promise<string> {
  const key = normalizeSessionKey(sessionKey);
  if (!isMcpClientSessionKey(key)) {
    throw new ColloquyError(
      'FORBIDDEN',
      `${method} reads only MCP client sessions (agent:<agentId>:mcp:<name>); other sessions read their inbox in their own turns.`,
      { key },
    );
  }
  if (!(await ctx.store.getSession(key))) {
    throw new ColloquyError('SESSION_NOT_FOUND', `${method}: no session "${key}"; open it with mcp.open.`, {
      key,
    });
  }
  return key;
}

async function takeInbox(ctx: RuntimeContext, key: string, limit: number): Promise<InboxEntry[]> {
  if ((await ctx.store.listInbox(key)).length === 0) return [];
  return ctx.store.transaction(async (tx) => {
    const entries = (await tx.listInbox(key)).slice(0, limit);
    if (entries.length === 0) return [];
    await tx.appendMessages(
      key,
      entries.map((entry) => entry.message),
    );
    const at = ctx.clock.now();
    await tx.consumeInbox(
      key,
      entries.map((entry) => entry.id),
      at,
    );
    return entries.map((entry) => ({ ...entry, consumedAt: at }));
  });
}
