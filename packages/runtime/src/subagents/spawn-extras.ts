import { ColloquyError, type DeliveryContext, type SessionRecord, threadBindingKey } from '@colloquy/core';
import type { AgentRunResult, AgentSessionInit } from '@colloquy/core/gateway';
import { checkAttachments, SUBAGENT_META_KEY } from '@colloquy/core/internal';
import type { RuntimeContext } from '../runtime/runtime-context.js';
import { removeTreeNoFollow, type WrittenAttachments, writeAttachments } from './attachment-files.js';
import { sessionWorkspaceDir } from './workspace.js';

/** A spawn whose session needs work before its run is queued (a thread, attachments). */
export interface PreparedSpawn {
  /** The session record to create (with the thread as its delivery context, attachment meta). */
  record: SessionRecord;
  /** Added to the run's extra system prompt (where the attachments are). */
  promptNote?: string;
  /** Extra fields of the `agent` result. */
  result: Pick<AgentRunResult, 'attachments' | 'thread'>;
  /** Call once the session exists: binds the thread to it. */
  commit(): Promise<void>;
  /** Call when queuing failed: removes what was written. */
  rollback(): Promise<void>;
}

/**
 * True when `agent` must prepare the new session asynchronously (see {@link prepareSpawn}).
 *
 * @param init - the `session` field of `agent`
 * @returns whether a thread or attachments were asked for
 */
export function needsPreparation(init: AgentSessionInit): boolean {
  return init.thread === true || (init.attachments !== undefined && init.attachments.length > 0);
}

/**
 * Prepares a spawned session before its run is queued:
 * - `thread: true`: creates a thread (or topic) in the spawning session's chat with the channel
 *   plugin's `createThread` and makes it the new session's delivery context;
 * - `attachments`: checks them against `tools.sessions_spawn.attachments` (every limit, before
 *   anything is written), then writes them to `<workspace>/.colloquy/attachments/<uuid>/` with a
 *   `manifest.json` (see `writeAttachments`).
 *
 * @param ctx - the runtime internals
 * @param workspaceRoot - the root of session workspaces
 * @param record - the new session's record (not stored yet)
 * @param init - the `session` field of `agent`
 * @param task - the run's message (titles the thread)
 * @returns the prepared spawn
 * @throws `FORBIDDEN` (attachments off, a symlink in the way), `INVALID_ARGUMENT` (a bad
 *   attachment), `NOT_SUPPORTED` (no thread support), `CHANNEL_ERROR` (thread creation failed)
 */
export async function prepareSpawn(
  ctx: RuntimeContext,
  workspaceRoot: string,
  record: SessionRecord,
  init: AgentSessionInit,
  task: string,
): Promise<PreparedSpawn> {
  const attachments = init.attachments ?? [];
  const limits = ctx.config.tools.sessions_spawn.attachments;
  let checked: ReturnType<typeof checkAttachments> | undefined;
  if (attachments.length > 0) {
    if (!limits.enabled) {
      throw new ColloquyError(
        'FORBIDDEN',
        'agent: attachments are turned off; set tools.sessions_spawn.attachments.enabled to true in the config.',
      );
    }
    checked = checkAttachments(attachments, limits);
    if (!checked.ok) throw new ColloquyError('INVALID_ARGUMENT', `agent: ${checked.error}`);
  }
  const mountPath = init.attachAs?.mountPath?.trim();
  if (mountPath !== undefined && [...mountPath].some((c) => c.charCodeAt(0) < 0x20)) {
    throw new ColloquyError('INVALID_ARGUMENT', 'agent: attachAs.mountPath holds a control character.');
  }

  const next: SessionRecord = { ...record };
  const result: PreparedSpawn['result'] = {};

  // Files first: a spawn that fails must not leave a thread (and its binding) behind.
  let written: WrittenAttachments | undefined;
  const workspace = sessionWorkspaceDir(workspaceRoot, record.key);
  const removeFiles = async () => {
    if (written) await removeTreeNoFollow(written.hostDir, workspace).catch(() => undefined);
  };
  if (checked?.ok) {
    written = await writeAttachments({
      workspace,
      files: checked.files,
      now: ctx.clock.now(),
      ...(mountPath ? { mountPath } : {}),
    });
    result.attachments = written.receipt;
    const meta = (record.meta?.[SUBAGENT_META_KEY] ?? {}) as Record<string, unknown>;
    next.meta = {
      ...record.meta,
      [SUBAGENT_META_KEY]: {
        ...meta,
        attachments: {
          id: written.id,
          files: written.receipt.files.length,
          totalBytes: written.receipt.totalBytes,
        },
      },
    };
  }

  let thread: (DeliveryContext & { threadId: string }) | undefined;
  if (init.thread) {
    try {
      thread = await createThreadFor(ctx, record, init, task);
    } catch (error) {
      await removeFiles();
      throw error;
    }
    next.deliveryContext = thread;
    next.channel = thread.channel;
    next.lastChannel = thread.channel;
    next.lastTo = thread.to;
    next.lastAccountId = thread.accountId;
    const parentChat = record.spawnedBy
      ? (await ctx.store.getSession(record.spawnedBy))?.chatType
      : undefined;
    if (parentChat) next.chatType = parentChat;
    result.thread = thread;
  }
  const bound = thread;
  const boundKey = (to: DeliveryContext & { threadId: string }): string =>
    threadBindingKey(ctx.plugins.get(to.channel)?.capabilities.threadScope, to.to, to.threadId);
  const files = written?.receipt.files.map((f) => `${f.name} (${f.bytes} bytes)`).join(', ');
  return {
    record: next,
    ...(written
      ? {
          promptNote: `Files for this task are in ${written.receipt.dir} (listed in ${written.receipt.manifest}): ${files}.`,
        }
      : {}),
    result,
    commit: async () => {
      if (!bound) return;
      const now = ctx.clock.now();
      await ctx.store.putThreadBinding({
        channel: bound.channel,
        accountId: bound.accountId,
        conversationId: bound.to,
        threadId: boundKey(bound),
        sessionKey: record.key,
        createdAt: now,
        lastActiveAt: now,
      });
    },
    rollback: async () => {
      await removeFiles();
      // The plugin may have bound the thread already; an unborn child must not own it.
      if (bound) await ctx.store.deleteThreadBinding(bound.channel, bound.accountId, boundKey(bound));
    },
  };
}

async function createThreadFor(
  ctx: RuntimeContext,
  record: SessionRecord,
  init: AgentSessionInit,
  task: string,
): Promise<DeliveryContext & { threadId: string }> {
  const parent = record.spawnedBy ? await ctx.store.getSession(record.spawnedBy) : undefined;
  const chat = parent?.deliveryContext;
  if (!chat) {
    throw new ColloquyError(
      'NOT_SUPPORTED',
      'agent: thread=true needs a spawning session with a chat (a delivery context); spawn without a thread.',
    );
  }
  const plugin = ctx.plugins.get(chat.channel);
  if (!plugin?.createThread || !plugin.capabilities.threads) {
    throw new ColloquyError(
      'NOT_SUPPORTED',
      `agent: the channel "${chat.channel}" cannot create threads; spawn without thread=true.`,
      { channel: chat.channel },
    );
  }
  const title = (init.label ?? task.split('\n')[0] ?? 'Sub-agent').trim().slice(0, 80) || 'Sub-agent';
  try {
    return await plugin.createThread({
      parent: { channel: chat.channel, to: chat.to, accountId: chat.accountId },
      title,
      sessionKey: record.key,
    });
  } catch (error) {
    throw new ColloquyError(
      'CHANNEL_ERROR',
      `agent: creating a thread on "${chat.channel}" failed: ${error instanceof Error ? error.message : String(error)}`,
      { channel: chat.channel },
      { cause: error },
    );
  }
}
