import type { ThreadBinding } from '@colloquy/core';
import { serializeRecord } from '@colloquy/core/store';
import { type DynamicStatements, whereClause } from './dynamic-statements.js';
import { parseOptional } from './record-json.js';
import type { Statements } from './statements.js';

// The bindings of chat threads to sessions.

/** Stores a binding, replacing the thread's earlier one. */
export function putThreadBinding(s: Statements, binding: ThreadBinding): void {
  s.upsertBinding.run(
    binding.channel,
    binding.accountId,
    binding.threadId,
    binding.sessionKey,
    serializeRecord(binding, 'thread binding'),
  );
}

/** The binding of a thread, if any. */
export function getThreadBinding(
  s: Statements,
  channel: string,
  accountId: string,
  threadId: string,
): ThreadBinding | undefined {
  return parseOptional<ThreadBinding>(s.bindingById.get(channel, accountId, threadId));
}

/** The bindings of a session and/or channel, oldest first. */
export function listThreadBindings(
  dynamic: DynamicStatements,
  query: { sessionKey?: string; channel?: string },
): ThreadBinding[] {
  const filters: string[] = [];
  const params: unknown[] = [];
  if (query.sessionKey !== undefined) {
    filters.push('session_key = ?');
    params.push(query.sessionKey);
  }
  if (query.channel !== undefined) {
    filters.push('channel = ?');
    params.push(query.channel);
  }
  const sql = `SELECT binding FROM thread_bindings${whereClause(filters)} ORDER BY rowid`;
  return dynamic
    .get(sql)
    .pluck()
    .all(...params)
    .map((json) => JSON.parse(json as string) as ThreadBinding);
}

/** Deletes a thread's binding; false when there was none. */
export function deleteThreadBinding(
  s: Statements,
  channel: string,
  accountId: string,
  threadId: string,
): boolean {
  return s.deleteBinding.run(channel, accountId, threadId).changes > 0;
}
