import type { SessionVisibility } from '@colloquy/core';
import type { McpScope } from '@colloquy/core/gateway';

/** Who an MCP request comes from: what its token says (HTTP), or the owner (stdio). */
export interface McpClientIdentity {
  /** The agent whose sessions the client works with. */
  agentId: string;
  /** The client's name; it acts as the session `agent:<agentId>:mcp:<name>`. */
  name: string;
  /** What it may do. */
  scopes: readonly McpScope[];
  /** How far it sees (clamped to `tools.sessions.visibility`). */
  visibility: SessionVisibility;
}

/** The MCP tools and the scope each needs (`subagents` needs `spawn` to steer or kill, `read` to list). */
export const MCP_TOOL_SCOPES = {
  sessions_list: 'read',
  sessions_history: 'read',
  session_status: 'read',
  sessions_search: 'read',
  agents_list: 'read',
  sessions_send: 'send',
  sessions_spawn: 'spawn',
  subagents: 'read',
  events_wait: 'read',
} as const satisfies Record<string, McpScope>;

/** A tool the MCP server serves. */
export type McpToolName = keyof typeof MCP_TOOL_SCOPES;

/**
 * The scope a call needs: the tool's, or `spawn` for `subagents` with an action other than `list`.
 *
 * @param tool - the tool called
 * @param args - its arguments as sent
 */
export function scopeForCall(tool: McpToolName, args: unknown): McpScope {
  if (tool === 'subagents') {
    const action =
      typeof args === 'object' && args !== null ? (args as { action?: unknown }).action : undefined;
    return action === 'list' ? 'read' : 'spawn';
  }
  return MCP_TOOL_SCOPES[tool];
}
