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
    await waitFor(
      () => /finished/.test(progressLines(h!.channel.sent)[0]?.text ?? ''),
      5000,
      'the finished line',
    );
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
    await waitFor(
      () => h!.channel.sent.some((m) => m.text === 'parent reply'),
      5000,
      'the parent’s reply to the result',
    );
    await quiesce(h);
    expect(progressLines(h.channel.sent)).toEqual([]);
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
