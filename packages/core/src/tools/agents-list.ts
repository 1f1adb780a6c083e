import { Type } from '@sinclair/typebox';
import type { ColloquyConfig } from '../config/index.js';
import { agentConfigFor } from '../config/index.js';
import { type AgentTool, toolResult } from '../interfaces/tool.js';
import { failure, type ToolScope } from './tool-context.js';
import { validateToolArgs } from './validate-args.js';

export const AgentsListParams = Type.Object({}, { additionalProperties: false });

/** One agent the caller may target with sessions_spawn. */
export interface SpawnableAgent {
  id: string;
  name?: string;
  default?: true;
}

/**
 * The agents `agentId` may spawn under: always its own; others only when its
 * `subagents.allowAgents` lists them (`"*"` = every configured agent).
 */
export function spawnableAgents(config: ColloquyConfig, agentId: string): SpawnableAgent[] {
  const allow = agentConfigFor(config, agentId).subagents.allowAgents;
  const configured = config.agents.list;
  const permitted = (id: string) => id === agentId || allow.includes('*') || allow.includes(id);
  const rows: SpawnableAgent[] = configured
    .filter((agent) => permitted(agent.id))
    .map((agent) => ({
      id: agent.id,
      ...(agent.name ? { name: agent.name } : {}),
      ...(agent.default ? { default: true as const } : {}),
    }));
  if (!rows.some((row) => row.id === agentId)) rows.unshift({ id: agentId });
  return rows;
}

/** Creates the `agents_list` tool for one requester. */
export function createAgentsListTool(scope: ToolScope): AgentTool<typeof AgentsListParams> {
  return {
    name: 'agents_list',
    description: 'List the agent ids you may pass as agentId to sessions_spawn.',
    parameters: AgentsListParams,
    async execute(_toolCallId, rawArgs) {
      const args = validateToolArgs('agents_list', AgentsListParams, rawArgs);
      if (!args.ok) return failure('error', args.error);
      return toolResult(spawnableAgents(scope.options.config, scope.options.agentId));
    },
  };
}
