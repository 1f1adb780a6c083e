import type { AgentTool, ColloquyConfig, SessionRecord } from '@colloquy/core';
import { SESSION_TOOL_NAMES, subagentMetaOf } from '@colloquy/core/internal';

/**
 * The tools a sub-agent gets: with `tools.subagents.tools.allow` set, exactly the tools it names;
 * otherwise every tool of the run except the session tools (`sessions_list`, `sessions_send`,
 * `sessions_spawn`, `subagents`, ...). `tools.subagents.tools.deny` removes tools in both cases.
 *
 * @param config - the resolved config
 * @param tools - the run's full tool set
 * @returns the sub-agent's tool set
 */
export function filterSubagentTools(config: ColloquyConfig, tools: readonly AgentTool[]): AgentTool[] {
  const { allow, deny } = config.tools.subagents.tools;
  const sessionTools: readonly string[] = SESSION_TOOL_NAMES;
  return tools.filter((tool) => {
    if (deny?.includes(tool.name)) return false;
    if (allow) return allow.includes(tool.name);
    return !sessionTools.includes(tool.name);
  });
}

/**
 * The sub-agent's own system prompt, recorded by `sessions_spawn` on the session: added to every
 * run of a sub-agent session (its first task, thread messages, steering and wake turns).
 *
 * @param session - the session of the run
 * @returns the prompt, or undefined for sessions that are not spawned sub-agents
 */
export function subagentPromptOf(session: SessionRecord): string | undefined {
  return session.kind === 'subagent' ? subagentMetaOf(session)?.systemPrompt : undefined;
}
