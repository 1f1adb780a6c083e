/**
 * What `sessions_spawn` records on a child session (`session.meta.subagent`), read back by the
 * runtime (cleanup, attachments) and by the `subagents` tool (list).
 */
import type { SessionRecord } from '../interfaces/records.js';
import { ANNOUNCE_SKIP } from './agent-to-agent.js';

/** The `meta` field of a child session that holds its {@link SubagentMeta}. */
export const SUBAGENT_META_KEY = 'subagent';

/** How a sub-agent was spawned. */
export interface SubagentMeta {
  /** `run`: one task, then it reports and ends; `session`: it stays, bound to a thread. */
  mode: 'run' | 'session';
  /** `delete`: the child session is removed after its announce; `keep`: archived later. */
  cleanup: 'delete' | 'keep';
  /** The start of the task (at most 200 characters), for lists. */
  task: string;
  /** The internal key of the session that spawned it. */
  requesterKey: string;
  /** Epoch milliseconds of the spawn. */
  spawnedAt: number;
  /**
   * The sub-agent's own system prompt (see {@link subagentSystemPrompt}); the runtime adds it to
   * every run of the session, not only the first.
   */
  systemPrompt?: string;
  /** Set by the runtime when attachments were written. */
  attachments?: { id: string; files: number; totalBytes: number };
}

/**
 * Reads a session's {@link SubagentMeta}, if it has a well-formed one.
 *
 * @param session - any session
 * @returns the meta, or `undefined` for sessions not spawned by `sessions_spawn`
 */
export function subagentMetaOf(session: Pick<SessionRecord, 'meta'>): SubagentMeta | undefined {
  const value = session.meta?.[SUBAGENT_META_KEY];
  if (typeof value !== 'object' || value === null) return undefined;
  const meta = value as Partial<SubagentMeta>;
  if (meta.mode !== 'run' && meta.mode !== 'session') return undefined;
  if (meta.cleanup !== 'delete' && meta.cleanup !== 'keep') return undefined;
  return meta as SubagentMeta;
}

/** What the child's system prompt says about its place in the tree. */
export interface SubagentPromptInput {
  /** The child's depth (1 for a child of a top-level session). */
  depth: number;
  /** `agents.defaults.subagents.maxSpawnDepth` of the child's agent. */
  maxDepth: number;
  /** The spawning session, as the child may name it. */
  requesterDisplayKey: string;
  label?: string;
  mode: 'run' | 'session';
}

/**
 * The extra system prompt of a sub-agent: who it is, that its result announces itself, and that it
 * must not busy-poll.
 *
 * @param input - depth, max depth, requester and mode
 * @returns the prompt text
 */
export function subagentSystemPrompt(input: SubagentPromptInput): string {
  const name = input.label ? ` "${input.label}"` : '';
  const canSpawn = input.depth < input.maxDepth;
  return [
    `You are a sub-agent${name} at depth ${input.depth} of at most ${input.maxDepth}, spawned by the session ${input.requesterDisplayKey} to do the task in the first message.`,
    input.mode === 'run'
      ? 'Do the task, then reply with the result. Your final reply is announced to the spawning session automatically: do not send it anywhere yourself.'
      : 'You stay available in your own thread after this task. Your final reply to each task is announced to the spawning session automatically.',
    canSpawn
      ? 'You may spawn sub-agents of your own; their results announce themselves to you, so never poll, sleep or loop waiting for them.'
      : 'You cannot spawn further sub-agents. Never poll, sleep or loop waiting for anything.',
    `If there is nothing worth reporting, reply exactly ${ANNOUNCE_SKIP}.`,
  ].join(' ');
}
