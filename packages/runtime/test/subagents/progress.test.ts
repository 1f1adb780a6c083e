import { ColloquyError } from '@colloquy/core';
import type { SentMessage } from '@colloquy/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { makeStore, waitFor } from '../support/harness.js';
import {
  call,
  isSubagent,
  MAIN,
  quiesce,
  type SubagentHarness,
  seedMain,
  startSubagentHarness,
  userTexts,
} from './subagents-fixture.js';

let h: SubagentHarness | undefined;
const cleanups: (() => void)[] = [];
afterEach(async () => {
  await h?.close();
  h = undefined;
  for (const cleanup of cleanups.splice(0)) cleanup();
});

/** Fast progress for tests: shown after 50 ms of work, edited at most every 100 ms. */
const FAST = { showAfterMs: 50, editIntervalMs: 100 };

/** The chat messages that are progress lines (not replies). */
function progressLines(sent: readonly SentMessage[]): SentMessage[] {
  return sent.filter((m) => /^\d+ helpers? (working|finished)/.test(m.text));
}

/** A script where sub-agents answer after `childMs` (the one labelled slow after twice that). */
function slowChildren(childMs: number) {
  return (request: Parameters<typeof isSubagent>[0]) =>
    isSubagent(request)
      ? {
          text: 'helper result',
          delayMs: JSON.stringify(request.messages).includes('(slow)') ? childMs * 2 : childMs,
        }
      : 'parent reply';
}

/** Waits until the first progress line is the finished one. */
function untilFinished(harness: SubagentHarness): Promise<void> {
  return waitFor(
    () => /finished/.test(progressLines(harness.channel.sent)[0]?.text ?? ''),
    5000,
    'the finished line',
  );
}

/** Waits for the parent's reply to its helpers' results. */
function untilParentReplied(harness: SubagentHarness): Promise<void> {
  return waitFor(
    () => harness.channel.sent.some((m) => m.text === 'parent reply'),
    8000,
    'the parent’s reply',
  );
}

/** Waits until the main session keeps no record of a line. */
function untilLineDropped(harness: SubagentHarness): Promise<void> {
  return waitFor(
    async () => (await harness.store.getSession(MAIN))?.meta?.chatProgress === undefined,
    3000,
    'the record of the line dropped',
  );
}

/** A script whose sub-agents answer only once `release` is called: all in the same tick. */
function heldChildren() {
  let release = (): void => {};
  const gate = new Promise<void>((resolve) => {
    release = resolve;
  });
  const script = async (request: Parameters<typeof isSubagent>[0]) => {
    if (!isSubagent(request)) return 'parent reply';
    await gate;
    return 'helper result';
  };
  return { script, release: () => release() };
}

/** The helper sessions of the main session, by label. */
async function helperKey(harness: SubagentHarness, label: string): Promise<string> {
  const session = (await harness.store.listSessions({ limit: 100 })).find((s) => s.label === label);
  if (!session) throw new Error(`no helper labelled ${label}`);
  return session.key;
}

async function spawn(harness: SubagentHarness, label: string, task = `Task ${label}`): Promise<void> {
  const spawned = await call<{ status: string }>((await harness.tools(MAIN)).sessions_spawn, { task, label });
  expect(spawned.status).toBe('accepted');
}

describe('sub-agent progress in the requester’s chat', () => {
  it('shows one line while helpers work, edits it in place, and finalises it when the last one ends', async () => {
    h = await startSubagentHarness({
      script: slowChildren(400),
      channel: { capabilities: { edits: true } },
      progress: FAST,
    });
    await seedMain(h.store);
    await spawn(h, 'research');
    await spawn(h, 'summary', 'Task summary (slow)');
    await waitFor(() => progressLines(h!.channel.sent).length > 0, 3000, 'the progress line');
    await untilFinished(h);
    await quiesce(h);

    const lines = progressLines(h.channel.sent);
    expect(lines, 'one progress message, edited in place').toHaveLength(1);
    const [line] = lines;
    expect(line!.text).toMatch(/^2 helpers finished in \d+ s$/);
    expect(line!.previousTexts?.[0]).toMatch(
      /^2 helpers working: research \((\d+ s|queued)\), summary \((\d+ s|queued)\)$/,
    );
    expect(line!.previousTexts?.some((t) => /^1 helper working: summary \(\d+ s\) · 1 done$/.test(t))).toBe(
      true,
    );
    expect(line!.to).toMatchObject({ channel: 'memory', to: 'user-1' });
    // Edits are throttled: far fewer than one per event or per millisecond.
    expect(line!.previousTexts!.length).toBeLessThanOrEqual(12);
    expect(h.channel.typing.length).toBeGreaterThan(0);
    expect((await h.store.getSession(MAIN))?.meta?.chatProgress).toBeUndefined();
    // The parent's reply to the results comes as its own message.
    expect(h.channel.sent.filter((m) => m.text === 'parent reply').length).toBeGreaterThan(0);
  });

  it('shows nothing when the channel turns progress off (channels.<id>.progress: false)', async () => {
    h = await startSubagentHarness({
      script: slowChildren(300),
      channel: { capabilities: { edits: true } },
      config: { channels: { memory: { progress: false } } },
      progress: FAST,
    });
    await seedMain(h.store);
    await spawn(h, 'research');
    // No typing for the helper either (the parent's own turn, later, may show its typing).
    await new Promise((resolve) => setTimeout(resolve, 150));
    expect(h.channel.typing).toEqual([]);
    await untilParentReplied(h);
    await quiesce(h);
    expect(progressLines(h.channel.sent)).toEqual([]);
    // Nothing at all: the only message is the reply.
    expect(h.channel.sent.every((m) => m.text === 'parent reply')).toBe(true);
    expect((await h.store.getSession(MAIN))?.meta?.chatProgress).toBeUndefined();
  });

  it('shows typing only on a channel that cannot edit messages', async () => {
    h = await startSubagentHarness({ script: slowChildren(300), progress: FAST });
    await seedMain(h.store);
    await spawn(h, 'research');
    await waitFor(() => h!.channel.typing.length > 0, 3000, 'typing while the helper works');
    await waitFor(() => h!.channel.sent.some((m) => m.text === 'parent reply'), 5000, 'the reply');
    await quiesce(h);
    expect(progressLines(h.channel.sent)).toEqual([]);
  });

  it('finalises the line after a restart while a helper was still working', async () => {
    const made = await makeStore('sqlite');
    cleanups.push(made.cleanup);
    const first = await startSubagentHarness({
      store: made.store,
      script: slowChildren(1500),
      channel: { capabilities: { edits: true } },
      progress: FAST,
    });
    await seedMain(first.store);
    await spawn(first, 'research');
    await waitFor(() => progressLines(first.channel.sent).length > 0, 3000, 'the progress line');
    const [shown] = progressLines(first.channel.sent);
    expect(shown!.text).toMatch(/^1 helper working: research/);
    expect((await first.store.getSession(MAIN))?.meta?.chatProgress).toMatchObject({
      messageId: shown!.messageId,
    });
    // The helper is cut by the shutdown and runs again after the restart.
    await first.runtime.shutdown({ drainMs: 0 });

    const reopened = await makeStore('sqlite', made.file);
    h = await startSubagentHarness({
      store: reopened.store,
      script: slowChildren(200),
      plugins: [first.channel],
      channel: { capabilities: { edits: true } },
      progress: FAST,
    });
    await waitFor(() => /finished/.test(shown!.text), 5000, 'the line finalised by the next process');
    expect(shown!.text).toMatch(/^1 helper finished in \d+ s$/);
    expect(progressLines(first.channel.sent), 'no second line').toHaveLength(1);
    expect((await h.store.getSession(MAIN))?.meta?.chatProgress).toBeUndefined();
  });

  it('follows helpers that start or fail at once, before their requester is looked up', async () => {
    h = await startSubagentHarness({
      script: (request) => {
        if (!isSubagent(request)) return 'parent reply';
        if (JSON.stringify(request.messages).includes('Task flaky')) {
          return { error: new Error('the model refused') };
        }
        return { text: 'helper result', delayMs: 1500 };
      },
      channel: { capabilities: { edits: true } },
      progress: FAST,
    });
    await seedMain(h.store);
    // A helper that fails at once: its round ends before the line is due, and leaves none.
    await spawn(h, 'flaky');
    await untilParentReplied(h);
    // A helper that starts at once: the line gives its running time, not "queued".
    await spawn(h, 'research');
    await waitFor(
      () => /^1 helper working: research \(\d+ s\)$/.test(progressLines(h!.channel.sent)[0]?.text ?? ''),
      3000,
      'the line with the running helper’s time',
    );
    await untilFinished(h);
    await quiesce(h);
    const lines = progressLines(h.channel.sent);
    expect(lines, 'no line left working for the failed helper').toHaveLength(1);
    expect(lines[0]!.text).toMatch(/^1 helper finished in \d+ s$/);
  });

  it('edits the line once when every helper ends in the same tick, and never shows it again', async () => {
    const held = heldChildren();
    h = await startSubagentHarness({
      script: held.script,
      channel: { capabilities: { edits: true } },
      progress: FAST,
    });
    await seedMain(h.store);
    await spawn(h, 'research');
    await spawn(h, 'summary');
    await waitFor(
      () => /^2 helpers working/.test(progressLines(h!.channel.sent)[0]?.text ?? ''),
      3000,
      'the line',
    );
    held.release();
    await untilFinished(h);
    await untilParentReplied(h);
    await quiesce(h);
    const lines = progressLines(h.channel.sent);
    expect(lines, 'one progress message').toHaveLength(1);
    expect(lines[0]!.text).toMatch(/^2 helpers finished in \d+ s$/);
    // Every earlier text is a working line: the finished one was written once, last.
    expect(lines[0]!.previousTexts?.every((t) => /^2 helpers working: /.test(t))).toBe(true);
    expect((await h.store.getSession(MAIN))?.meta?.chatProgress).toBeUndefined();
  });

  it('counts a helper killed while queued and one killed while running as failed, and finalises the line', async () => {
    const held = heldChildren();
    h = await startSubagentHarness({
      script: held.script,
      channel: { capabilities: { edits: true } },
      config: { runtime: { lanes: { subagent: 1 } } },
      progress: FAST,
    });
    cleanups.push(held.release);
    await seedMain(h.store);
    await spawn(h, 'research');
    await spawn(h, 'summary');
    await waitFor(
      () =>
        /^2 helpers working: research \(\d+ s\), summary \(queued\)$/.test(
          progressLines(h!.channel.sent)[0]?.text ?? '',
        ),
      3000,
      'the line with one helper running and one queued',
    );
    const subagents = (await h.tools(MAIN)).subagents;
    expect(
      (await call<{ status: string }>(subagents, { action: 'kill', target: await helperKey(h, 'summary') }))
        .status,
    ).toBe('ok');
    expect(
      (await call<{ status: string }>(subagents, { action: 'kill', target: await helperKey(h, 'research') }))
        .status,
    ).toBe('ok');
    await untilFinished(h);
    await quiesce(h);
    const lines = progressLines(h.channel.sent);
    expect(lines).toHaveLength(1);
    expect(lines[0]!.text).toMatch(/^2 helpers finished in \d+ s \(2 failed\)$/);
    expect((await h.store.getSession(MAIN))?.meta?.chatProgress).toBeUndefined();
  });

  it('does not send the line again nor edit it on every tick when the platform refuses edits, and removes it at the end', async () => {
    h = await startSubagentHarness({
      script: slowChildren(3000),
      channel: { capabilities: { edits: true } },
      progress: FAST,
    });
    let edits = 0;
    h.channel.editMessage = async (_to, messageId) => {
      edits += 1;
      throw new ColloquyError('CHANNEL_ERROR', `Message ${messageId} can no longer be edited.`);
    };
    await seedMain(h.store);
    await spawn(h, 'research');
    await untilParentReplied(h);
    await quiesce(h);
    const lines = progressLines(h.channel.sent);
    expect(lines, 'the line is sent once').toHaveLength(1);
    // About 30 ticks while the helper works: a few edits are tried, then the round stops, and the
    // finished line is tried once.
    expect(edits).toBeGreaterThanOrEqual(2);
    expect(edits).toBeLessThanOrEqual(4);
    expect(lines[0]!.deleted, 'a line that cannot be finalised is removed').toBe(true);
    expect((await h.store.getSession(MAIN))?.meta?.chatProgress).toBeUndefined();
  });

  it('gives up the line for the round after a few failed sends, without a flood or a stale record', async () => {
    h = await startSubagentHarness({
      script: slowChildren(2000),
      channel: { capabilities: { edits: true } },
      progress: FAST,
    });
    const send = h.channel.send.bind(h.channel);
    let attempts = 0;
    h.channel.send = async (to, message) => {
      if (!/^\d+ helpers? working/.test(message.text)) return send(to, message);
      attempts += 1;
      throw new ColloquyError('CHANNEL_ERROR', 'The platform refused the message.');
    };
    await seedMain(h.store);
    await spawn(h, 'research');
    await untilParentReplied(h);
    await quiesce(h);
    expect(attempts).toBeGreaterThanOrEqual(1);
    expect(attempts, 'tries are bounded while the helper works ~20 ticks').toBeLessThanOrEqual(3);
    expect(progressLines(h.channel.sent)).toEqual([]);
    expect((await h.store.getSession(MAIN))?.meta?.chatProgress).toBeUndefined();
  });

  it('tries the finishing edit again when the platform could not take it for a moment', async () => {
    h = await startSubagentHarness({
      script: slowChildren(300),
      channel: { capabilities: { edits: true } },
      progress: FAST,
    });
    const edit = h.channel.editMessage!.bind(h.channel);
    let refused = 0;
    h.channel.editMessage = async (to, messageId, message) => {
      if (/finished/.test(message.text) && refused < 2) {
        refused += 1;
        throw new ColloquyError('RATE_LIMITED', 'Too many edits.', { retryAfterMs: 150 });
      }
      return edit(to, messageId, message);
    };
    await seedMain(h.store);
    await spawn(h, 'research');
    await waitFor(() => progressLines(h!.channel.sent).length > 0, 3000, 'the progress line');
    const [shown] = progressLines(h.channel.sent);
    await waitFor(() => /finished/.test(shown!.text), 5000, 'the line finalised in the same process');
    expect(refused).toBe(2);
    expect(shown!.text).toMatch(/^1 helper finished in \d+ s$/);
    await untilLineDropped(h);
  });

  it('finalises after a restart a line whose finishing edit the platform could not take', async () => {
    const made = await makeStore('sqlite');
    cleanups.push(made.cleanup);
    const first = await startSubagentHarness({
      store: made.store,
      script: slowChildren(400),
      channel: { capabilities: { edits: true } },
      progress: FAST,
    });
    const channel = first.channel;
    const edit = channel.editMessage!.bind(channel);
    let down = false;
    channel.editMessage = async (to, messageId, message) => {
      if (down) throw new ColloquyError('RATE_LIMITED', 'The platform is busy.', { retryAfterMs: 100 });
      return edit(to, messageId, message);
    };
    await seedMain(first.store);
    await spawn(first, 'research');
    await waitFor(() => progressLines(channel.sent).length > 0, 3000, 'the progress line');
    down = true;
    await untilParentReplied(first);
    await quiesce(first);
    const [shown] = progressLines(channel.sent);
    expect(shown!.text).toMatch(/working/);
    expect((await first.store.getSession(MAIN))?.meta?.chatProgress).toMatchObject({
      messageId: shown!.messageId,
    });
    await first.runtime.shutdown({ drainMs: 0 });

    down = false;
    const reopened = await makeStore('sqlite', made.file);
    h = await startSubagentHarness({
      store: reopened.store,
      script: slowChildren(200),
      plugins: [channel],
      channel: { capabilities: { edits: true } },
      progress: FAST,
    });
    await waitFor(() => /finished/.test(shown!.text), 5000, 'the line finalised by the next process');
    expect(shown!.text).toMatch(/^1 helper finished in \d+ s$/);
    expect(progressLines(channel.sent)).toHaveLength(1);
    await untilLineDropped(h);
  });

  it("counts a helper's own helpers as its work: one line until the helper took their results, then finalised", async () => {
    // The coordinator spawns a crawler and ends its turn at once; the crawler works 600 ms; the
    // coordinator's turn on the crawler's result takes 300 ms (past showAfterMs: a line of its own
    // were it a new round).
    const coordinatorTurnsEnded: number[] = [];
    h = await startSubagentHarness({
      script: (request) => {
        if (!isSubagent(request)) return 'parent reply';
        const [task = '', ...later] = userTexts(request);
        if (task.includes('crawl it')) return { text: 'crawled', delayMs: 600 };
        if (request.messages.at(-1)?.role === 'toolResult') return 'coordinating';
        if (later.length > 0) {
          coordinatorTurnsEnded.push(Date.now() + 300);
          return { text: 'noted', delayMs: 300 };
        }
        return { toolCalls: [{ name: 'sessions_spawn', arguments: { task: 'crawl it', label: 'crawler' } }] };
      },
      config: {
        agents: { defaults: { subagents: { maxSpawnDepth: 2 } } },
        tools: { subagents: { tools: { allow: ['sessions_spawn'] } } },
      },
      channel: { capabilities: { edits: true } },
      progress: FAST,
    });
    await seedMain(h.store);
    await spawn(h, 'coordinator', 'coordinate the crawl');
    await waitFor(
      () => /finished/.test(progressLines(h!.channel.sent)[0]?.text ?? ''),
      5000,
      'the finished line',
    );
    const finishedAt = Date.now();
    await quiesce(h);

    const lines = progressLines(h.channel.sent);
    expect(lines, 'one progress message').toHaveLength(1);
    expect(lines[0]!.text).toMatch(/^1 helper finished in \d+ s$/);
    // While the crawler worked, the coordinator (its own turn long ended) showed as working.
    expect(lines[0]!.previousTexts?.some((t) => /^1 helper working: coordinator \(\d+ s\)$/.test(t))).toBe(
      true,
    );
    expect(coordinatorTurnsEnded).toHaveLength(1);
    expect(finishedAt).toBeGreaterThanOrEqual(coordinatorTurnsEnded[0]!);
  });
});
