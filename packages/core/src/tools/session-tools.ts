import type { AgentTool } from '../interfaces/tool.js';
import { createAgentsListTool } from './agents-list.js';
import { createSessionStatusTool } from './session-status.js';
import { createSessionsHistoryTool } from './sessions-history.js';
import { createSessionsListTool } from './sessions-list.js';
import { createSessionsSearchTool } from './sessions-search.js';
import { createSessionsSendTool } from './sessions-send.js';
import { createSessionsSpawnTool } from './sessions-spawn.js';
import { createSessionsYieldTool } from './sessions-yield.js';
import { createSubagentsTool } from './subagents.js';
import { createToolScope, type SessionToolsOptions } from './tool-context.js';

/** The names of the session tools, which sub-agents do not get by default. */
export const SESSION_TOOL_NAMES = [
  'sessions_list',
  'sessions_history',
  'sessions_search',
  'sessions_send',
  'sessions_spawn',
  'sessions_yield',
  'subagents',
  'agents_list',
  'session_status',
] as const;

/**
 * Creates the session tools for one requester session. Every tool calls only the Gateway
 * interface, and every access goes through the one visibility guard (`checkSessionAccess`).
 * Tools never throw for model mistakes: they return `{ status: "error" | "forbidden", error }`.
 *
 * @param options - who is calling (key, agent, sandboxed), the resolved config and the gateway
 * @returns the tools, ready to register with an agent loop
 * @example
 * ```ts
 * const tools = createSessionTools({ requesterKey: 'agent:main:main', agentId: 'main', config, gateway });
 * const list = tools.find((t) => t.name === 'sessions_list')!;
 * const result = await list.execute('call-1', { kinds: ['group'], limit: 10 });
 * ```
 */
export function createSessionTools(options: SessionToolsOptions): AgentTool[] {
  const scope = createToolScope(options);
  return [
    createSessionsListTool(scope),
    createSessionsHistoryTool(scope),
    createSessionsSearchTool(scope),
    createSessionsSendTool(scope),
    createSessionsSpawnTool(scope),
    createSessionsYieldTool(scope),
    createSubagentsTool(scope),
    createAgentsListTool(scope),
    createSessionStatusTool(scope),
  ] as AgentTool[];
}
