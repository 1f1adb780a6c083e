/**
 * Per-agent views of a resolved config: the default agent, and one agent's settings with
 * `agents.defaults` merged in.
 */
import type { ColloquyConfig } from './schema.js';

/** One agent's effective settings: its `agents.list` entry over `agents.defaults`. */
export interface ResolvedAgentConfig {
  /** The agent id. */
  id: string;
  /** The display name from the agent's entry. */
  name?: string;
  /** True for the default agent (see `defaultAgentId`). */
  default: boolean;
  /** False when `agents.list` has no entry for this id (the result is then `agents.defaults` alone). */
  listed: boolean;
  /** `provider/model`; the entry's, else `agents.defaults.model`, else unset. */
  model?: string;
  /** The entry's, else `agents.defaults.systemPrompt`, else unset. */
  systemPrompt?: string;
  /** The entry's `sandboxed`, else `agents.defaults.sandbox.enabled`. */
  sandboxed: boolean;
  /** Sub-agent limits from `agents.defaults.subagents`, with this entry's `allowAgents`. */
  subagents: {
    maxSpawnDepth: number;
    maxChildrenPerAgent: number;
    runTimeoutSeconds: number;
    archiveAfterMinutes: number;
    /** Agent ids this agent may spawn under (`"*"` = any). Default: only its own id. */
    allowAgents: string[];
  };
  /** The entry's `tools.allow`: names or `*` patterns of the extra (MCP) tools it may use. Default: none. */
  toolAllow: string[];
}

/**
 * The id of the default agent: the `agents.list` entry marked `default: true`, else the first entry.
 *
 * @param config - a resolved config
 * @returns the agent id
 */
export function defaultAgentId(config: ColloquyConfig): string {
  const list = config.agents.list;
  return (list.find((agent) => agent.default === true) ?? list[0])?.id ?? 'main';
}

/**
 * One agent's effective settings: its `agents.list` entry merged over `agents.defaults`.
 *
 * @param config - a resolved config
 * @param agentId - the agent id (matched after trimming and lower-casing, like session keys)
 * @returns the merged settings; for an id with no `agents.list` entry (e.g. a session of an agent
 *   removed from the config), `agents.defaults` alone with `listed: false`
 *
 * @example
 * ```ts
 * const agent = agentConfigFor(config, 'main');
 * if (agent.sandboxed) { ... }
 * ```
 */
export function agentConfigFor(config: ColloquyConfig, agentId: string): ResolvedAgentConfig {
  const id = agentId.trim().toLowerCase();
  const entry = config.agents.list.find((agent) => agent.id === id);
  const defaults = config.agents.defaults;
  const resolved: ResolvedAgentConfig = {
    id,
    default: entry !== undefined && id === defaultAgentId(config),
    listed: entry !== undefined,
    sandboxed: entry?.sandboxed ?? defaults.sandbox.enabled,
    subagents: {
      ...defaults.subagents,
      allowAgents: [...(entry?.subagents?.allowAgents ?? [id])],
    },
    toolAllow: [...(entry?.tools?.allow ?? [])],
  };
  if (entry?.name !== undefined) resolved.name = entry.name;
  const model = entry?.model ?? defaults.model;
  if (model !== undefined) resolved.model = model;
  const systemPrompt = entry?.systemPrompt ?? defaults.systemPrompt;
  if (systemPrompt !== undefined) resolved.systemPrompt = systemPrompt;
  return resolved;
}
