import type { ColloquyConfig, SessionRecord } from '@colloquy/core';
import { agentConfigFor, agentIdFromSessionKey, subagentMetaOf } from '@colloquy/core/internal';

/**
 * The allow lists a run's MCP tools must pass: its agent's `agents.list[].tools.allow`, and for a
 * sub-agent spawned by a session of another agent, that agent's list too, so spawning across
 * agents never widens what the requester could use. A sub-agent of its own agent inherits exactly
 * its parent's MCP tools; `tools.subagents.tools` narrows them further by name.
 *
 * @param config - the resolved config
 * @param session - the session of the run
 * @returns the lists (every one must allow a tool)
 */
export function mcpAllowListsFor(config: ColloquyConfig, session: SessionRecord): string[][] {
  const lists = [agentConfigFor(config, session.agentId).toolAllow];
  if (session.kind === 'subagent') {
    const requester = subagentMetaOf(session)?.requesterKey;
    const requesterAgent = requester ? agentIdFromSessionKey(requester) : undefined;
    if (requesterAgent !== undefined && requesterAgent !== session.agentId) {
      lists.push(agentConfigFor(config, requesterAgent).toolAllow);
    }
  }
  return lists;
}

/**
 * The system prompt paragraph about MCP servers a run cannot use now, or undefined when there are none.
 *
 * @param notices - one sentence per unavailable server
 * @returns the paragraph
 */
export function mcpNoticePrompt(notices: readonly string[]): string | undefined {
  if (notices.length === 0) return undefined;
  return [
    'Some of your tools are unavailable right now:',
    ...notices.map((notice) => `- ${notice}`),
    'If the user needs them, tell them so instead of guessing.',
  ].join('\n');
}
