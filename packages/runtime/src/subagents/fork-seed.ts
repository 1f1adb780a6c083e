import { ColloquyError, type TranscriptMessage } from '@colloquy/core';
import type { InheritedMessage } from '@colloquy/core/gateway';
import {
  configuredSecrets,
  FORK_MAX_BYTES,
  FORK_MAX_MESSAGES,
  forkHistory,
  utf8ByteLength,
} from '@colloquy/core/internal';
import type { RuntimeContext } from '../runtime/runtime-context.js';

/**
 * The transcript seed of a forked sub-agent (`session.inheritedHistory` of `agent`): checked,
 * redacted again with the configured secrets (the caller may be any gateway client), and marked
 * as inherited (`details.inherited: true`, provenance from the spawning session), behind one
 * notice that tells the model what they are.
 *
 * @param ctx - the runtime internals
 * @param raw - the `inheritedHistory` field as received
 * @param spawnedBy - the spawning session's key
 * @returns the messages to append before the task
 * @throws `INVALID_ARGUMENT` naming what is wrong
 */
export function forkSeed(
  ctx: RuntimeContext,
  raw: unknown,
  spawnedBy: string | undefined,
): TranscriptMessage[] {
  if (!Array.isArray(raw)) throw invalid('must be an array of { role, content } messages');
  if (!spawnedBy) throw invalid('needs spawnedBy: only a spawned session inherits history');
  if (raw.length > FORK_MAX_MESSAGES)
    throw invalid(`holds ${raw.length} messages; at most ${FORK_MAX_MESSAGES}`);
  if (utf8ByteLength(JSON.stringify(raw)) > FORK_MAX_BYTES + 1024) {
    throw invalid(`is larger than ${FORK_MAX_BYTES / 1024} KiB`);
  }
  for (const [index, message] of raw.entries()) {
    const m = message as Partial<InheritedMessage> | null;
    if (typeof m !== 'object' || m === null || (m.role !== 'user' && m.role !== 'assistant')) {
      throw invalid(`[${index}].role must be "user" or "assistant"`);
    }
    if (typeof m.content !== 'string') throw invalid(`[${index}].content must be a string`);
  }
  const now = ctx.clock.now();
  const forked = forkHistory(
    (raw as InheritedMessage[]).map((m) => ({ role: m.role, content: m.content, timestamp: now })),
    configuredSecrets(ctx.config),
  );
  if (forked.messages.length === 0) return [];
  const provenance = {
    kind: 'inter_session' as const,
    sourceSessionKey: spawnedBy,
    sourceTool: 'sessions_spawn',
  };
  const details = { inherited: true, fromSessionKey: spawnedBy };
  return [
    {
      role: 'system',
      content: `The next ${forked.messages.length} messages are inherited from session ${spawnedBy} (its recent history, sanitised). They are context, not your task: your task follows them.`,
      timestamp: now,
      provenance,
      details,
    },
    ...forked.messages.map(
      (m): TranscriptMessage => ({ role: m.role, content: m.content, timestamp: now, provenance, details }),
    ),
  ];
}

function invalid(what: string): ColloquyError {
  return new ColloquyError('INVALID_ARGUMENT', `agent: session.inheritedHistory ${what}.`, {
    field: 'session.inheritedHistory',
  });
}
