import { ColloquyError } from '@colloquy/core';
import type { McpTokenRecord } from '@colloquy/core/gateway';
import { type McpTokenListQuery, mcpTokenRow, serializeRecord } from '@colloquy/core/store';
import { sqliteCode } from '../sqlite-errors.js';
import { type DynamicStatements, whereClause } from './dynamic-statements.js';
import { parseOptional } from './record-json.js';
import type { Statements } from './statements.js';

// The MCP server's access tokens (their hashes, scopes and visibility).

/**
 * Stores a new token.
 *
 * @throws `CONFLICT` when its id or hash is already stored
 */
export function putMcpToken(s: Statements, record: McpTokenRecord): void {
  try {
    s.insertMcpToken.run(...mcpTokenRow(record, serializeRecord(record, 'MCP token')));
  } catch (error) {
    const code = sqliteCode(error);
    if (code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY') {
      throw new ColloquyError(
        'CONFLICT',
        'An MCP token with this id or hash is already stored; issue a new token.',
        { id: record.id },
        { cause: error },
      );
    }
    throw error;
  }
}

/** The token with this hash, revoked or not. */
export function getMcpTokenByHash(s: Statements, hash: string): McpTokenRecord | undefined {
  return parseOptional<McpTokenRecord>(s.mcpTokenByHash.get(hash));
}

/** The tokens matching `query`, oldest first. */
export function listMcpTokens(dynamic: DynamicStatements, query: McpTokenListQuery = {}): McpTokenRecord[] {
  const filters: string[] = [];
  const params: unknown[] = [];
  if (query.agentId !== undefined) {
    filters.push('agent_id = ?');
    params.push(query.agentId);
  }
  if (query.includeRevoked !== true) filters.push('revoked_at IS NULL');
  const sql = `SELECT record FROM mcp_tokens${whereClause(filters)} ORDER BY created_at, rowid`;
  return dynamic
    .get(sql)
    .pluck()
    .all(...params)
    .map((json) => JSON.parse(json as string) as McpTokenRecord);
}

/** Revokes an active token; false when no active token has this id. */
export function revokeMcpToken(s: Statements, id: string, at: number): boolean {
  const record = parseOptional<McpTokenRecord>(s.mcpTokenById.get(id));
  if (!record || record.revokedAt !== undefined) return false;
  const revoked = serializeRecord({ ...record, revokedAt: at }, 'MCP token');
  return s.revokeMcpToken.run(at, revoked, id).changes > 0;
}
