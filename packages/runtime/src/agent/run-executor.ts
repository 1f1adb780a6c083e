import type { SessionRecord } from '@colloquy/core';
import type { RunRecord } from '@colloquy/core/gateway';
import { agentConfigFor, toColloquyError } from '@colloquy/core/internal';
import { startTyping } from '../delivery/typing.js';
import type { QueuedRun } from '../queue/queued-run.js';
import { stopKindOf, stopMessageOf } from '../queue/stop-reason.js';
import { retryWithPauses } from '../runtime/retry-with-pauses.js';
import type { RuntimeContext } from '../runtime/runtime-context.js';
import { redactSpawnAttachments } from '../subagents/redact-attachments.js';
import { filterSubagentTools, subagentPromptOf } from '../subagents/tool-filter.js';
import { startTurnTrace, type TurnTrace } from '../telemetry/turn-trace.js';
import { runAgentLoop } from './agent-loop.js';
import { buildSystemPrompt, toModelMessages } from './build-prompt.js';
import { answerGatewayCommand } from './gateway-command.js';
import { mcpAllowListsFor, mcpNoticePrompt } from './mcp-allow-lists.js';
import { selectModel } from './model-selection.js';
import { historyTokenBudget } from './prompt-budget.js';
import { holdTurn, OUTAGE_NOTICE, outageOverFor, providerOutageOf, settleOutage } from './provider-outage.js';
import {
  deliverPlanned,
  type MarkedReply,
  type PlannedReply,
  planReply,
  sendMarkedReply,
} from './reply-delivery.js';
import { type BegunTurn, beginTurn, type EndedTurn, endTurn } from './run-lifecycle.js';
import { isPassingStoreRefusal, STORE_REFUSAL_PAUSES_MS } from './store-refusals.js';
import type { TurnOutcome } from './turn-outcome.js';
import { costOf } from './usage.js';

/**
 * Executes one turn of a session (the command queue's executor): begins it durably, runs the
 * model with the session's tools, ends it durably with the chat message it owes (see
 * `planReply`), publishes events, sends that message once and wakes the session again when unread
 * inbox entries arrived meanwhile.
 *
 * @param ctx - the runtime internals
 * @param batch - the turn's queued runs, leader first
 * @param signal - aborted on kill, timeout or shutdown
 */
export async function executeTurn(
  ctx: RuntimeContext,
  batch: readonly QueuedRun[],
  signal: AbortSignal,
): Promise<void> {
  const sessionKey = batch[0]!.sessionKey;
  // An inbound message's turn may have begun in the commit that stored it.
  const begun =
    batch[0]!.begun ??
    (await beginTurn(
      ctx,
      sessionKey,
      batch.map((item) => item.id),
    ));
  if (!begun) return;
  const turn = startTurnTrace(ctx.telemetry, begun.session ?? { key: sessionKey }, begun.runs);
  try {
    await ctx.telemetry.within(turn.context, () => continueTurn(ctx, sessionKey, begun, signal, turn));
  } finally {
    ctx.turnEndStored.delete(sessionKey);
    turn.end();
  }
}

/** The rest of {@link executeTurn} once the turn has begun, in the turn's span. */
async function continueTurn(
  ctx: RuntimeContext,
  sessionKey: string,
  begun: BegunTurn,
  signal: AbortSignal,
  turn: TurnTrace,
): Promise<void> {
  if (begun.woke) ctx.yields.disarm(sessionKey);
  for (const run of begun.runs) ctx.events.emit({ type: 'run.started', runId: run.runId, sessionKey });
  ctx.events.emit({ type: 'session.updated', sessionKey });

  let outcome: TurnOutcome;
  if (!begun.session) {
    outcome = { status: 'error', error: `The session ${sessionKey} was deleted before the run started.` };
  } else {
    const session = begun.session;
    const stopTyping = begun.runs[0]!.deliver
      ? startTyping(session, {
          config: ctx.config,
          plugins: ctx.plugins,
          logger: ctx.log,
          intervalMs: ctx.typingIntervalMs,
          delayMs: ctx.typingDelayMs,
        })
      : () => {};
    try {
      // A store with group commit acknowledges writes early: the begun turn must be durable first.
      await ctx.store.flush?.();
      outcome = await runModel(ctx, session, begun, signal, turn);
    } catch (error) {
      outcome = outcomeOfError(error, signal);
    } finally {
      stopTyping();
    }
    // One apology per outage and chat; the turns behind it wait for the provider (settleOutage).
    if (outcome.outage)
      outcome = settleOutage(ctx, sessionKey, begun.runs[0]!, { ...outcome, outage: outcome.outage });
    else if (outcome.status === 'done') outageOverFor(ctx, sessionKey);
  }

  turn.outcome(outcome);
  const plan = begun.session ? planReply(begun.session, begun.runs[0]!, outcome) : undefined;
  let ended: EndedTurn;
  let reply: MarkedReply | undefined;
  let endFailed = false;
  try {
    // A store that refuses for a while (a full disk, a database restarting) gets the end again
    // once it takes writes: the turn's answer is kept, not turned into an apology.
    ended = await whileStoreRefuses(ctx, sessionKey, 'the end of a turn', async () => {
      const stored = await endTurn(ctx, sessionKey, begun.runs, outcome, plan, begun.session);
      // The end carries the reply's `sending` mark: one flush makes both durable before the
      // send. A group commit the store undid is an end not stored: it is tried again.
      await ctx.store.flush?.();
      return stored;
    });
    reply = ended.reply;
  } catch (error) {
    reply = undefined;
    endFailed = true;
    ctx.log.error({ err: error, sessionKey }, 'could not store the end of a turn');
    const message = toColloquyError(error).message;
    const failed: TurnOutcome = {
      status: 'error',
      error: message,
      notice: 'The answer could not be saved, so it was not sent; send your message again.',
    };
    ended = await failRuns(
      ctx,
      sessionKey,
      begun.runs,
      message,
      begun.session && planReply(begun.session, begun.runs[0]!, failed),
    );
  }
  for (const run of ended.runs) {
    if (run.status === 'queued') continue;
    ctx.events.emit({
      type: 'run.ended',
      runId: run.runId,
      sessionKey,
      status: run.status,
      ...(run.error ? { error: run.error } : {}),
    });
  }
  ctx.events.emit({ type: 'session.updated', sessionKey });
  // Ended and idle in the store: the session's next message may begin its turn in the commit that
  // stores it, while this one sends its reply (the outbox sends replies in their order).
  if (!outcome.requeue && !endFailed) ctx.turnEndStored.add(sessionKey);
  if (outcome.requeue) {
    const held = ended.runs.filter((run) => run.status === 'queued');
    if (outcome.outage && held.length > 0) await holdTurn(ctx, sessionKey, held, outcome.outage, signal);
    return;
  }
  if (outcome.status === 'error') {
    // The owner and the logs get the details; other chat users only an apology (errorNoticeFor).
    ctx.log.warn(
      { sessionKey, runId: begun.runs[0]?.runId, error: outcome.error },
      'the agent could not answer',
    );
  }

  if (reply) {
    await sendMarkedReply(ctx, reply);
  } else if (endFailed && ended.session && ended.runs[0]) {
    // The end could not be stored: failRuns planned an error notice instead.
    await deliverPlanned(ctx, ended.session, ended.runs[0]);
  }
  // Entries that reached the inbox while the turn ran: those the end saw, and those whose wake
  // came after it. With a cluster, an entry another instance writes after the end's inbox check
  // is woken by its writer: the end holds the session row from before that check until it
  // commits, and a cluster's wake takes the row before it looks for an active run.
  const wokenMeanwhile = ctx.wakeAfterTurn.delete(sessionKey);
  if (ctx.autoWake && ctx.accepting && ctx.queue.pendingCount(sessionKey) === 0) {
    if (ended.inboxWaiting || wokenMeanwhile) await ctx.wake(sessionKey, true);
  }
}

async function runModel(
  ctx: RuntimeContext,
  session: SessionRecord,
  begun: BegunTurn,
  signal: AbortSignal,
  turn: TurnTrace,
): Promise<TurnOutcome> {
  const { config, store } = ctx;
  const leader = begun.runs[0]!;
  const command = await answerGatewayCommand(ctx, session, begun.runs);
  if (command !== undefined) {
    const finalMessage = {
      role: 'assistant' as const,
      content: command,
      timestamp: ctx.clock.now(),
      runId: leader.runId,
    };
    return { status: 'done', reply: command, finalMessage };
  }
  const selection = selectModel(session, config, ctx.models);
  if (!selection.ok) return { status: 'error', error: selection.error, notice: selection.error };

  const hookTools =
    ctx.tools?.({
      session,
      run: leader,
      gateway: ctx.gateway,
      config,
      now: () => ctx.clock.now(),
      track: (work) => ctx.track(work),
    }) ?? [];
  // MCP servers start on first use; a server that cannot start is a notice in the prompt, not a wait.
  const mcp = ctx.mcp ? await ctx.mcp.toolsFor(mcpAllowListsFor(config, session)) : undefined;
  const allTools = mcp ? [...hookTools, ...mcp.tools] : hookTools;
  if (mcp) turn.useMcpTools(mcp.tools);
  // Sub-agents get the full tool set minus the session tools (tools.subagents.tools).
  const tools = session.kind === 'subagent' ? filterSubagentTools(config, allTools) : allTools;
  const agent = agentConfigFor(config, session.agentId);
  const system = buildSystemPrompt(agent?.systemPrompt ?? config.agents.defaults.systemPrompt, [
    subagentPromptOf(session),
    mcpNoticePrompt(mcp?.notices ?? []),
    ...begun.runs.map((run) => run.extraSystemPrompt),
  ]);
  const budget = historyTokenBudget(config.models.contextWindowTokens, system, tools);
  const history = await whileStoreRefuses(
    ctx,
    session.key,
    'the history of a turn',
    () => ctx.history.load(store, session.key, session.sessionId, budget, begun.endSeq),
    signal,
  );
  const messages = toModelMessages(history);

  const result = await runAgentLoop({
    provider: selection.provider,
    modelId: selection.modelId,
    system,
    messages,
    tools,
    maxSteps: config.runtime.maxSteps,
    signal,
    runId: leader.runId,
    trace: turn,
    now: () => ctx.clock.now(),
    cost: (usage) => costOf(config, selection.modelRef, usage),
    ...(session.thinkingLevel ? { thinking: session.thinkingLevel } : {}),
    record: (stored) =>
      whileStoreRefuses(
        ctx,
        session.key,
        'a step of a turn',
        async () => {
          // sessions_spawn attachment content never reaches the stored transcript.
          if (await store.getSession(session.key)) {
            await store.appendMessages(session.key, redactSpawnAttachments(stored));
          }
        },
        signal,
      ),
    takeInjected: () => ctx.subagents.takeSteering(session.key),
    onDelta: (text) => {
      if (ctx.events.hasListeners()) {
        ctx.events.emit({ type: 'run.delta', runId: leader.runId, sessionKey: session.key, text });
      }
    },
    onToolCall: (toolName, toolCallId) => {
      ctx.events.emit({
        type: 'run.tool',
        runId: leader.runId,
        sessionKey: session.key,
        toolName,
        toolCallId,
      });
    },
  });
  const usage = { usage: result.usage, ...(result.costUsd !== undefined ? { costUsd: result.costUsd } : {}) };
  // A yield ends the turn after its tool call: what the model said with it is the reply.
  if (result.status === 'yielded') return { status: 'done', reply: result.reply, ...usage };
  if (result.status === 'final') {
    return {
      status: 'done',
      reply: result.reply,
      ...usage,
      ...(result.finalMessage ? { finalMessage: result.finalMessage } : {}),
    };
  }
  const error =
    `The agent stopped after ${result.steps} model steps (runtime.maxSteps) without a final answer. ` +
    'Raise runtime.maxSteps in the config, or ask it to continue.';
  return { status: 'error', error, notice: error, reply: result.reply, ...usage };
}

/**
 * Runs a store call of a turn, and runs it again while the store refuses it for a reason that
 * passes by itself (a full disk, a database restarting): the turn waits for the store rather than
 * losing the model's work to an apology. Stops trying once the runtime shuts down or `signal`
 * (the turn's kill or timeout) fires.
 */
function whileStoreRefuses<T>(
  ctx: RuntimeContext,
  sessionKey: string,
  what: string,
  work: () => Promise<T>,
  signal?: AbortSignal,
): Promise<T> {
  return retryWithPauses(work, {
    pausesMs: STORE_REFUSAL_PAUSES_MS,
    retries: (error) => ctx.accepting && !signal?.aborted && isPassingStoreRefusal(error),
    onRetry: (error, attempt) =>
      ctx.log.warn({ err: error, sessionKey, attempt }, `the store refused ${what} for now; trying again`),
  });
}

function outcomeOfError(error: unknown, signal: AbortSignal): TurnOutcome {
  const kind = stopKindOf(signal);
  if (kind === 'shutdown') return { status: 'killed', requeue: true };
  if (kind === 'timeout') {
    const message = stopMessageOf(signal);
    return { status: 'timeout', error: message, notice: `${message} Send the message again to retry.` };
  }
  if (kind === 'killed') return { status: 'killed', error: stopMessageOf(signal) };
  const e = toColloquyError(error, 'MODEL_ERROR');
  const outage = providerOutageOf(e);
  if (outage) return { status: 'error', error: e.message, notice: OUTAGE_NOTICE, outage };
  return { status: 'error', error: e.message, notice: `The agent could not answer: ${e.message}` };
}

/** Marks the turn's runs `error` one by one when its end could not be committed; the leader carries `plan`. */
async function failRuns(
  ctx: RuntimeContext,
  sessionKey: string,
  runs: readonly RunRecord[],
  error: string,
  plan: PlannedReply | undefined,
): Promise<EndedTurn> {
  const now = ctx.clock.now();
  const updated: RunRecord[] = [];
  for (const [index, run] of runs.entries()) {
    const meta = index === 0 && plan ? { meta: { ...run.meta, pendingDelivery: plan } } : {};
    try {
      updated.push(
        await ctx.store.updateRun(run.runId, {
          status: 'error',
          error,
          endedAt: now,
          updatedAt: now,
          ...meta,
        }),
      );
    } catch (e) {
      ctx.log.error({ err: e, runId: run.runId }, 'could not mark a run as failed');
      updated.push({ ...run, status: 'error', error });
    }
  }
  return {
    session: await ctx.store.getSession(sessionKey).catch(() => undefined),
    runs: updated,
    inboxWaiting: true,
  };
}
