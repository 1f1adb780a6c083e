/**
 * Sub-agent progress in the requester's chat: while a session's helpers (the sub-agents it
 * spawned) run, its chat shows typing, and where the channel can edit messages, one status line
 * edited in place ("2 helpers working: research (40 s), summary (queued)") that becomes
 * "3 helpers finished in 1 min 10 s" when the last one ends. A helper's own helpers (sessions with
 * no chat of their own) are its work: it shows as working while any of them works, and until it has
 * taken their announces in its next turn, so a tree's round ends once, when the whole tree is done.
 * The line's message id is kept in the requester session's meta, so a restarted runtime picks the
 * line up again and finalises it.
 * A platform that keeps failing the line's sends or edits is asked a few times a round, not on every
 * tick; a line that can no longer be edited is deleted at the end rather than left "working".
 */
import type { DeliveryContext, SessionRecord } from '@colloquy/core';
import type { GatewayEvent, RunRecord, RunStatus } from '@colloquy/core/gateway';
import { startTyping } from '../delivery/typing.js';
import type { RuntimeContext } from '../runtime/runtime-context.js';
import { finishedLine, type HelperProgress, workingLine } from './progress-text.js';

/** Tuning of the progress line (runtime option `progress`). */
export interface ChatProgressOptions {
  /** Show the line once helpers have been at work this long: quick helpers leave no trace. Default 2000 ms. */
  showAfterMs?: number;
  /** Edit the line at most this often (platforms rate-limit edits). Default 5000 ms. */
  editIntervalMs?: number;
}

/** The progress of one requester's helpers, in this process. */
export interface ChatProgress {
  /** Picks up the lines a previous process left (from session meta); finalises those whose helpers ended. */
  restore(): Promise<void>;
  /** Stops timers and typing; lines stay as they are for the next process to pick up. */
  stop(): void;
}

/** Where the line of a requester is kept between processes (`SessionRecord.meta`). */
export const PROGRESS_META_KEY = 'chatProgress';

/** What session meta keeps of a shown line. */
interface StoredLine {
  messageId: string;
  to: DeliveryContext;
  /** Epoch ms the round's first helper was queued. */
  startedAt: number;
  /** The round's helpers: their session keys and labels. */
  helpers: { key: string; label: string }[];
}

interface Helper extends HelperProgress {
  key: string;
}

/** A session below a helper: spawned by the helper or by one below it, with no line of its own. */
interface Descendant {
  /** The session that spawned it. */
  parent: string;
  /** The helper of the board it is below. */
  top: string;
  /** Its latest run is queued or running. */
  working: boolean;
}

interface Board {
  requesterKey: string;
  startedAt: number;
  helpers: Map<string, Helper>;
  /** The sessions below the helpers, by key. */
  descendants: Map<string, Descendant>;
  messageId?: string;
  to?: DeliveryContext;
  shown?: string;
  lastEditAt: number;
  timer?: NodeJS.Timeout;
  stopTyping: () => void;
  /** Send policy refused the line, or the platform failed it too often: this round shows no more. */
  muted?: boolean;
  /** Sends or edits of the line that failed in a row. */
  failures: number;
}

/** What the finishing edit needs once its board is gone. */
interface FinishedLine {
  requesterKey: string;
  messageId: string;
  to?: DeliveryContext;
  text: string;
}

const ACTIVE: readonly RunStatus[] = ['queued', 'running'];
/**
 * Failed sends or edits of a line in a row after which its round stops trying (platforms that
 * refuse it would otherwise be asked on every tick), and tries of the finishing edit.
 */
const MAX_LINE_FAILURES = 3;

/**
 * True unless `channels.<id>.progress` is `false` in the config.
 *
 * @param ctx - the runtime internals (config)
 * @param channel - the channel plugin id
 */
export function progressEnabled(ctx: Pick<RuntimeContext, 'config'>, channel: string): boolean {
  const section = ctx.config.channels[channel];
  return !(
    typeof section === 'object' &&
    section !== null &&
    (section as { progress?: unknown }).progress === false
  );
}

/**
 * Creates the progress tracker and subscribes it to the runtime's run events.
 *
 * @param ctx - the runtime internals
 * @param options - when to show the line and how often to edit it
 * @returns restore (on start) and stop (on shutdown)
 */
export function createChatProgress(ctx: RuntimeContext, options: ChatProgressOptions = {}): ChatProgress {
  const showAfterMs = options.showAfterMs ?? 2000;
  const editIntervalMs = options.editIntervalMs ?? 5000;
  const boards = new Map<string, Board>();
  /** Helper (or descendant) session key -> requester key, for the sessions of a board. */
  const requesterOf = new Map<string, string>();
  /** Timers of finishing edits tried again. */
  const retries = new Set<NodeJS.Timeout>();
  let chain: Promise<void> = Promise.resolve();
  let restoring = false;
  /** Queued helper runs whose requester is being looked up: their next events belong to a board. */
  let lookups = 0;
  let stopped = false;

  /** Runs event handling one step at a time, in event order. */
  const enqueue = (step: () => Promise<void>): void => {
    chain = chain.then(step).catch((error: unknown) => {
      ctx.log.warn({ err: error }, 'sub-agent progress could not be updated');
    });
    ctx.track(chain);
  };

  ctx.events.subscribe((event: GatewayEvent) => {
    if (stopped) return;
    if (event.type === 'run.queued' && event.lane === 'subagent') {
      lookups += 1;
      enqueue(() => helperQueued(event.sessionKey, event.runId).finally(() => (lookups -= 1)));
    } else if (
      (event.type === 'run.started' || event.type === 'run.ended') &&
      (boards.size > 0 || restoring || lookups > 0)
    ) {
      const at = ctx.clock.now();
      enqueue(async () =>
        helperChanged(event.sessionKey, event.type === 'run.started' ? 'running' : event.status, at),
      );
    }
  });

  async function helperQueued(key: string, runId: string): Promise<void> {
    const known = requesterOf.get(key);
    if (known !== undefined) {
      await helperChanged(key, 'queued', ctx.clock.now());
      return;
    }
    // A thread-bound helper's conversation in its thread is not work for the requester (nor announced).
    const run = await ctx.store.getRun(runId);
    if (!run || (run.deliver && run.provenance?.sourceTool !== 'sessions_spawn')) return;
    const helper = await ctx.store.getSession(key);
    if (helper?.spawnedBy === undefined) return;
    const requester = await ctx.store.getSession(helper.spawnedBy);
    if (!requester) return;
    if (!canShow(requester)) {
      // A helper's helper: its work is the helper's, on the line of the board the helper is on.
      const board = boards.get(requesterOf.get(requester.key) ?? '');
      if (board) addDescendant(board, key, requester.key);
      return;
    }
    let board = boards.get(requester.key);
    if (!board) {
      board = openBoard(requester, ctx.clock.now());
      boards.set(requester.key, board);
    }
    board.helpers.set(key, { key, label: helper.label ?? 'helper', state: 'queued' });
    requesterOf.set(key, requester.key);
    arm(board, board.messageId ? editIntervalMs : showAfterMs);
  }

  function addDescendant(board: Board, key: string, parent: string): void {
    const top = board.helpers.has(parent) ? parent : board.descendants.get(parent)?.top;
    if (top === undefined) return;
    board.descendants.set(key, { parent, top, working: true });
    requesterOf.set(key, board.requesterKey);
  }

  async function helperChanged(key: string, status: RunStatus, at: number): Promise<void> {
    const board = boards.get(requesterOf.get(key) ?? '');
    if (!board) return;
    const helper = board.helpers.get(key);
    const descendant = board.descendants.get(key);
    if (helper) {
      if (status === 'running') {
        helper.state = 'running';
        helper.startedAt = at;
      } else {
        helper.state = ACTIVE.includes(status) ? 'queued' : status === 'done' ? 'ok' : 'failed';
      }
    } else if (descendant) {
      descendant.working = ACTIVE.includes(status);
    } else {
      return;
    }
    await finishIfDone(board, at);
  }

  /**
   * Ends the round once nothing on the board works and no helper or descendant has announces
   * waiting for its next turn; while one has, the round stays open (checked again on a timer).
   */
  async function finishIfDone(board: Board, at: number): Promise<void> {
    if (isBoardWorking(board)) return;
    if (await wakeAhead(board)) {
      arm(board, editIntervalMs);
      return;
    }
    await finish(board, at);
  }

  /** True when a session that spawned one on the board will run again for its announces. */
  async function wakeAhead(board: Board): Promise<boolean> {
    if (!ctx.autoWake) return false;
    const parents = new Set([...board.descendants.values()].map((d) => d.parent));
    for (const key of parents) {
      const waiting =
        (await ctx.store.listOutbox({ statuses: ['pending'], requesterSessionKey: key, limit: 1 })).length >
          0 || (await ctx.store.listInbox(key)).length > 0;
      // A killed session is not woken by the announces of its helpers.
      if (waiting && latestRun(await ctx.store.listRuns({ sessionKey: key }))?.status !== 'killed') {
        return true;
      }
    }
    return false;
  }

  function canShow(requester: SessionRecord): boolean {
    const to = requester.deliveryContext;
    return to !== undefined && ctx.plugins.has(to.channel) && progressEnabled(ctx, to.channel);
  }

  function openBoard(requester: SessionRecord, at: number): Board {
    return {
      requesterKey: requester.key,
      startedAt: at,
      helpers: new Map(),
      descendants: new Map(),
      lastEditAt: 0,
      failures: 0,
      stopTyping: startTyping(requester, {
        config: ctx.config,
        plugins: ctx.plugins,
        logger: ctx.log,
        intervalMs: ctx.typingIntervalMs,
      }),
    };
  }

  /** Shows or edits the line after `delayMs`, unless an update is already due. */
  function arm(board: Board, delayMs: number): void {
    if (board.timer || stopped) return;
    board.timer = setTimeout(() => {
      board.timer = undefined;
      enqueue(() => refresh(board));
    }, delayMs);
    board.timer.unref();
  }

  async function refresh(board: Board): Promise<void> {
    if (boards.get(board.requesterKey) !== board || stopped) return;
    if (!isBoardWorking(board)) {
      await finishIfDone(board, ctx.clock.now());
      return;
    }
    const requester = await ctx.store.getSession(board.requesterKey);
    const plugin = requester?.deliveryContext && ctx.plugins.get(requester.deliveryContext.channel);
    if (requester && plugin?.capabilities.edits && canShow(requester) && !board.muted) {
      const now = ctx.clock.now();
      const text = workingLine(shownHelpers(board), now);
      if (board.messageId === undefined) await showLine(board, requester, text, now);
      else if (text !== board.shown) await editLine(board, requester, text, now);
    }
    // Durations in the line move on: edit again while helpers work.
    arm(board, editIntervalMs);
  }

  async function showLine(board: Board, requester: SessionRecord, text: string, now: number): Promise<void> {
    const outcome = await ctx.deliver({
      session: requester,
      message: { text, format: 'plain' },
      kind: 'progress',
    });
    // Send policy said no (or there is nowhere to send): no line this round, and no more tries.
    if (outcome.status === 'denied' || outcome.status === 'skipped') board.muted = true;
    if (outcome.status !== 'delivered') {
      countFailure(board);
      return;
    }
    board.failures = 0;
    board.messageId = outcome.messageId;
    board.to = requester.deliveryContext;
    board.shown = text;
    board.lastEditAt = now;
    await keepLine(board);
  }

  async function editLine(board: Board, requester: SessionRecord, text: string, now: number): Promise<void> {
    const outcome = await ctx.deliver({
      session: requester,
      message: { text, format: 'plain' },
      kind: 'progress',
      ...(board.to ? { to: board.to } : {}),
      edit: board.messageId!,
    });
    if (outcome.status === 'delivered') {
      board.shown = text;
      board.failures = 0;
    } else countFailure(board);
    board.lastEditAt = now;
  }

  /** A send or edit of the line failed: after a few in a row, the round stops showing it. */
  function countFailure(board: Board): void {
    board.failures += 1;
    if (board.failures < MAX_LINE_FAILURES || board.muted) return;
    board.muted = true;
    ctx.log.warn(
      { sessionKey: board.requesterKey, failures: board.failures },
      'the sub-agent progress line failed too often; it is not updated again this round',
    );
  }

  /** Ends a round: the line (if shown) becomes the summary, and the kept id is dropped. */
  async function finish(board: Board, at: number): Promise<void> {
    boards.delete(board.requesterKey);
    clearTimeout(board.timer);
    board.stopTyping();
    for (const key of [...board.helpers.keys(), ...board.descendants.keys()]) requesterOf.delete(key);
    if (board.messageId === undefined) return;
    await finishLine(
      {
        requesterKey: board.requesterKey,
        messageId: board.messageId,
        ...(board.to ? { to: board.to } : {}),
        text: finishedLine([...board.helpers.values()], at - board.startedAt),
      },
      1,
    );
  }

  /**
   * Edits a shown line into its summary and drops the kept id. An edit the platform could not take
   * for now is tried again a few times (the kept id lets the next start finish it otherwise); a line
   * that cannot be edited at all is deleted, so it does not stay "working".
   */
  async function finishLine(line: FinishedLine, attempt: number): Promise<void> {
    if (stopped) return;
    const requester = await ctx.store.getSession(line.requesterKey);
    if (!requester) return;
    const outcome = await ctx.deliver({
      session: requester,
      message: { text: line.text, format: 'plain' },
      kind: 'progress',
      ...(line.to ? { to: line.to } : {}),
      edit: line.messageId,
    });
    if (outcome.status === 'failed' && outcome.retryable) {
      if (attempt < MAX_LINE_FAILURES) {
        const timer = setTimeout(
          () => {
            retries.delete(timer);
            enqueue(() => finishLine(line, attempt + 1));
          },
          Math.max(editIntervalMs, outcome.retryAfterMs ?? 0),
        );
        timer.unref();
        retries.add(timer);
      }
      return;
    }
    if (outcome.status === 'failed') await deleteLine(line, requester);
    await dropLine(line.requesterKey);
  }

  async function deleteLine(line: FinishedLine, requester: SessionRecord): Promise<void> {
    const to = line.to ?? requester.deliveryContext;
    const plugin = to && ctx.plugins.get(to.channel);
    if (!to || !plugin?.deleteMessage) return;
    try {
      await plugin.deleteMessage(to, line.messageId);
    } catch (error) {
      ctx.log.warn(
        { err: error, sessionKey: line.requesterKey },
        'the sub-agent progress line could not be deleted',
      );
    }
  }

  async function keepLine(board: Board): Promise<void> {
    const line: StoredLine = {
      messageId: board.messageId!,
      to: board.to!,
      startedAt: board.startedAt,
      helpers: [...board.helpers.values()].map(({ key, label }) => ({ key, label })),
    };
    await patchMeta(board.requesterKey, line);
  }

  async function dropLine(requesterKey: string): Promise<void> {
    await patchMeta(requesterKey, undefined);
  }

  async function patchMeta(key: string, line: StoredLine | undefined): Promise<void> {
    await ctx.store.transaction(async (tx) => {
      const session = await tx.getSession(key);
      if (!session) return;
      const { [PROGRESS_META_KEY]: _previous, ...rest } = session.meta ?? {};
      await tx.patchSession(key, { meta: line ? { ...rest, [PROGRESS_META_KEY]: line } : rest });
    });
  }

  /** Takes over a line a previous process showed: goes on editing it, or finalises it. */
  async function adopt(requester: SessionRecord, line: StoredLine): Promise<void> {
    if (boards.has(requester.key)) return;
    const runs = await ctx.store.listRuns({ spawnedBy: requester.key });
    const latest = new Map<string, RunRecord>();
    for (const run of runs) latest.set(run.sessionKey, latestRun([latest.get(run.sessionKey), run])!);
    const board = openBoard(requester, line.startedAt);
    board.messageId = line.messageId;
    board.to = line.to;
    let endedAt = line.startedAt;
    for (const { key, label } of line.helpers) {
      const run = latest.get(key);
      const state: HelperProgress['state'] =
        run === undefined || run.status === 'done'
          ? 'ok'
          : ACTIVE.includes(run.status)
            ? (run.status as 'queued' | 'running')
            : 'failed';
      board.helpers.set(key, {
        key,
        label,
        state,
        ...(run?.startedAt !== undefined ? { startedAt: run.startedAt } : {}),
      });
      endedAt = Math.max(endedAt, run?.endedAt ?? 0);
    }
    boards.set(requester.key, board);
    for (const key of board.helpers.keys()) requesterOf.set(key, requester.key);
    if ([...board.helpers.values()].some(isWorking)) arm(board, 0);
    else await finish(board, endedAt);
  }

  return {
    restore() {
      restoring = true;
      enqueue(async () => {
        try {
          // Read every page first: adopting a line patches its session, which reorders the pages.
          const found: [SessionRecord, StoredLine][] = [];
          const page = 500;
          for (let offset = 0; ; offset += page) {
            const sessions = await ctx.store.listSessions({ includeArchived: true, limit: page, offset });
            for (const session of sessions) {
              const line = storedLineOf(session);
              if (line) found.push([session, line]);
            }
            if (sessions.length < page) break;
          }
          for (const [session, line] of found) await adopt(session, line);
        } finally {
          restoring = false;
        }
      });
      return chain;
    },
    stop() {
      stopped = true;
      for (const board of boards.values()) {
        clearTimeout(board.timer);
        board.stopTyping();
      }
      boards.clear();
      requesterOf.clear();
      for (const timer of retries) clearTimeout(timer);
      retries.clear();
    },
  };
}

function isWorking(helper: HelperProgress): boolean {
  return helper.state === 'queued' || helper.state === 'running';
}

function isBoardWorking(board: Board): boolean {
  return (
    [...board.helpers.values()].some(isWorking) || [...board.descendants.values()].some((d) => d.working)
  );
}

/** The helpers as the line shows them: one whose descendants work is working. */
function shownHelpers(board: Board): HelperProgress[] {
  const busy = new Set([...board.descendants.values()].filter((d) => d.working).map((d) => d.top));
  return [...board.helpers.values()].map((helper) =>
    busy.has(helper.key) && !isWorking(helper) ? { ...helper, state: 'running' } : helper,
  );
}

/** The run created last, if any. */
function latestRun(runs: readonly (RunRecord | undefined)[]): RunRecord | undefined {
  let latest: RunRecord | undefined;
  for (const run of runs) if (run && (!latest || run.createdAt >= latest.createdAt)) latest = run;
  return latest;
}

/** The line a session's meta keeps, when it is well formed. */
function storedLineOf(session: SessionRecord): StoredLine | undefined {
  const line = session.meta?.[PROGRESS_META_KEY] as Partial<StoredLine> | undefined;
  if (typeof line?.messageId !== 'string' || typeof line.to !== 'object' || !Array.isArray(line.helpers)) {
    return undefined;
  }
  return line as StoredLine;
}
