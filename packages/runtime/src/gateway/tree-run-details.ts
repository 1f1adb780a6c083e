/**
 * What `sessions.tree` shows inside a run besides its record: the tool calls, read back from the
 * transcript, and the announce, from the run's recorded outcome or its outbox row.
 */
import type { SpawnTreeAnnounce, SpawnTreeToolCall } from '@colloquy/core/gateway';
import {
  type OutboxEntry,
  type RunRecord,
  type StoredMessage,
  TERMINAL_RUN_STATUSES,
} from '@colloquy/core/store';

/** One model step's tool calls: run one after another, each starting when the one before it ended. */
interface Step {
  at: number;
  calls: SpawnTreeToolCall[];
}

/**
 * The tool calls of each run in `messages`, in the order they were made. A call starts when its
 * model step ended (its assistant message) or, after the first, when the call before it ended;
 * it ends with its `toolResult` message. A call with no result yet is `running` while its run is
 * active and `unfinished` once the run ended.
 *
 * @param messages - transcript messages, oldest first (a tail may start inside a run)
 * @param runs - the runs to report, by id (other runs' messages are skipped)
 * @returns the calls by run id; a run without calls has no entry
 */
export function toolCallsByRun(
  messages: readonly StoredMessage[],
  runs: ReadonlyMap<string, Pick<RunRecord, 'status'>>,
): Map<string, SpawnTreeToolCall[]> {
  const steps = new Map<string, Step[]>();
  const byId = new Map<string, SpawnTreeToolCall>();
  for (const message of messages) {
    const run = message.runId === undefined ? undefined : runs.get(message.runId);
    if (!run) continue;
    const runSteps = steps.get(message.runId!) ?? [];
    steps.set(message.runId!, runSteps);
    if (message.role === 'assistant' && Array.isArray(message.content)) {
      const step: Step = { at: message.timestamp, calls: [] };
      for (const block of message.content) {
        if (block.type !== 'toolCall') continue;
        const call: SpawnTreeToolCall = {
          toolCallId: block.id,
          name: block.name,
          startedAt: message.timestamp,
          outcome: TERMINAL_RUN_STATUSES.includes(run.status) ? 'unfinished' : 'running',
        };
        step.calls.push(call);
        byId.set(block.id, call);
      }
      if (step.calls.length > 0) runSteps.push(step);
    } else if (message.role === 'toolResult' && message.toolCallId !== undefined) {
      let call = byId.get(message.toolCallId);
      if (!call) {
        // Its step is older than the tail: what is known is when it ended.
        call = {
          toolCallId: message.toolCallId,
          name: message.toolName ?? 'unknown',
          startedAt: message.timestamp,
          outcome: 'ok',
        };
        byId.set(message.toolCallId, call);
        runSteps.push({ at: message.timestamp, calls: [call] });
      }
      call.endedAt = message.timestamp;
      call.outcome = message.isError ? 'error' : 'ok';
    }
  }
  const out = new Map<string, SpawnTreeToolCall[]>();
  for (const [runId, runSteps] of steps) {
    const calls: SpawnTreeToolCall[] = [];
    for (const step of runSteps) {
      let previousEnd = step.at;
      for (const call of step.calls) {
        call.startedAt = Math.max(call.startedAt, previousEnd);
        previousEnd = call.endedAt ?? previousEnd;
        calls.push(call);
      }
    }
    if (calls.length > 0) out.set(runId, calls);
  }
  return out;
}

/**
 * How a sub-agent run's result reached its requester: the outcome recorded on the run once settled,
 * else its outbox row (`pending` while it waits, `failed` when parked because the requester is gone).
 *
 * @param run - the run (only sub-agent runs, with `spawnedBy`, announce)
 * @param outbox - the run's outbox row, when there is one
 * @returns the announce, or `undefined` for a run that announces nothing (yet)
 */
export function announceOf(
  run: Pick<RunRecord, 'spawnedBy' | 'announce'>,
  outbox: OutboxEntry | undefined,
): SpawnTreeAnnounce | undefined {
  const to = outbox?.requesterSessionKey ?? run.spawnedBy;
  if (to === undefined) return undefined;
  if (run.announce) return { to, state: run.announce.outcome, at: run.announce.at };
  if (!outbox) return undefined;
  switch (outbox.status) {
    case 'pending':
      return { to, state: 'pending', at: outbox.createdAt };
    case 'delivered':
      return { to, state: 'delivered', at: outbox.deliveredAt ?? outbox.updatedAt };
    case 'skipped':
      return { to, state: 'skipped', at: outbox.updatedAt };
    case 'parked':
      return { to, state: 'failed', at: outbox.updatedAt };
  }
}
