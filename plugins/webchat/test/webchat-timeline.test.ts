import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { type AgentTool, toolResult } from '@colloquy/core';
import type { ModelRequest } from '@colloquy/core/model';
import type { RunRecord } from '@colloquy/core/store';
import { lastUserText, makeSessionRecord, type ScriptStep } from '@colloquy/testkit';
import { Type } from '@sinclair/typebox';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHROMIUM, HAS_CHROMIUM, launchChromium, trackProblems, visitorChat } from './support/browser.js';
import { type RuntimeHost, startRuntimeHost } from './support/runtime-host.js';
import { ADMIN_TOKEN } from './support/start.js';

/** Waits `ms` (an abort cuts it short) and answers what it looked up. */
const sleeper = (name: string, description: string): AgentTool => ({
  name,
  description,
  parameters: Type.Object({ ms: Type.Number() }),
  execute: async (_id, args, signal) => {
    const { ms } = args as { ms: number };
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      signal?.addEventListener('abort', () => {
        clearTimeout(timer);
        resolve();
      });
    });
    return toolResult({ status: 'ok', found: `${name} results` });
  },
});
const TOOLS = [sleeper('lookup', 'Looks something up.'), sleeper('crawl', 'Crawls the web for a long time.')];

/**
 * A sub-agent's task decides what it does: `research` looks something up, then answers; `fail`
 * fails in the model; `crawl` crawls for a minute (the test kills it); anything else answers.
 */
function script(request: ModelRequest): ScriptStep {
  const task = request.messages.find((m) => m.role === 'user');
  const text = typeof task?.content === 'string' ? task.content : (lastUserText(request) ?? '');
  const afterTool = request.messages.at(-1)?.role === 'toolResult';
  if (text.includes('research')) {
    return afterTool
      ? { text: 'Found it.', delayMs: 150 }
      : { toolCalls: [{ name: 'lookup', arguments: { ms: 250 } }], delayMs: 100 };
  }
  if (text.includes('fail')) return { error: { code: 'MODEL_ERROR', message: 'the model refused the task' } };
  if (text.includes('crawl')) return { toolCalls: [{ name: 'crawl', arguments: { ms: 60_000 } }] };
  return { text: 'Noted.', delayMs: 80 };
}

const row = (page: Page, key: string) => page.locator(`.tl-row[data-key="${key}"]`);

describe.skipIf(!HAS_CHROMIUM)(
  `the owner's spawn timeline in Chromium (${CHROMIUM})`,
  { timeout: 60_000 },
  () => {
    let browser: Browser;
    let server: RuntimeHost;

    beforeAll(async () => {
      browser = await launchChromium();
      server = await startRuntimeHost(undefined, { title: 'Colloquy' }, undefined, {
        script,
        tools: () => TOOLS,
      });
    }, 60_000);

    afterAll(async () => {
      await server?.stop();
      await browser?.close();
    });

    async function ownerPage(): Promise<Page> {
      const context = await browser.newContext({
        viewport: { width: 1400, height: 820 },
        deviceScaleFactor: 1,
      });
      const page = await context.newPage();
      (page as Page & { problems: string[] }).problems = trackProblems(page);
      await page.goto(new URL(`?admin=${ADMIN_TOKEN}`, server.base).href);
      await page.locator('#panel:not([hidden])').waitFor();
      return page;
    }

    async function spawn(parent: string, key: string, task: string, label: string): Promise<string> {
      const { runId } = await server.runtime.gateway.call('agent', {
        sessionKey: key,
        message: task,
        lane: 'subagent',
        spawnedBy: parent,
        session: { label },
      });
      return runId;
    }

    it('draws a depth-2 tree of 5 sub-agents as it runs: bars, tool calls, a failure, a kill, announces', async () => {
      const page = await ownerPage();
      await page.fill('#input', 'plan a trip');
      await page.press('#input', 'Enter');
      await page.locator('.msg[data-role="assistant"]:not(.streaming)').waitFor();
      const { chat } = await visitorChat(page);
      const { sessions } = await server.runtime.gateway.call('sessions.list', {});
      const root = sessions.find((s) => s.deliveryContext?.to === chat)!.key;

      const sub = (name: string) => `agent:main:subagent:${name}`;
      await spawn(root, sub('coordinator'), 'coordinate the trip', 'coordinator');
      await spawn(root, sub('trains'), 'research the trains', 'trains');
      await spawn(root, sub('flaky'), 'fail on purpose', 'flaky');
      await spawn(sub('coordinator'), sub('hotels'), 'research the hotels', 'hotels');
      await spawn(sub('coordinator'), sub('crawler'), 'crawl every hotel site', 'crawler');

      await page.locator(`.node[data-key="${root}"] .timeline-button`).first().click();
      await page.locator('#timeline:not([hidden])').waitFor();
      expect(await page.locator('#tree').isHidden()).toBe(true);

      // Live: the crawler runs, inside its crawl call; then it is killed mid-run.
      const crawler = row(page, sub('crawler'));
      await crawler.and(page.locator('[data-status="running"]')).waitFor();
      await crawler.locator('.tl-bar[data-status="running"] .tl-tool[data-outcome="running"]').waitFor();
      await server.runtime.gateway.call('agent.abort', { sessionKey: sub('crawler') });
      await crawler.locator('.tl-bar[data-status="killed"] .tl-tool[data-outcome="unfinished"]').waitFor();

      // Settled: each child's bar with its status, tool calls, and its announce back to its parent.
      for (const name of ['coordinator', 'trains', 'hotels', 'flaky', 'crawler']) {
        await row(page, sub(name))
          .locator('.tl-announce[data-state="delivered"]')
          .waitFor({ timeout: 15_000 });
      }
      expect(
        await page.locator('.tl-row').evaluateAll((rows) => rows.map((r) => (r as HTMLElement).dataset.key)),
      ).toEqual([root, sub('coordinator'), sub('hotels'), sub('crawler'), sub('trains'), sub('flaky')]);
      expect(await row(page, sub('hotels')).getAttribute('aria-level')).toBe('3');
      await row(page, sub('trains'))
        .locator('.tl-bar[data-status="done"] .tl-tool[data-outcome="ok"]')
        .waitFor();
      await row(page, sub('hotels'))
        .locator('.tl-bar[data-status="done"] .tl-tool[data-outcome="ok"]')
        .waitFor();
      const flaky = row(page, sub('flaky'));
      expect(await flaky.getAttribute('data-failed')).toBe('true');
      expect(await flaky.locator('.tl-bar[data-status="error"]').count()).toBe(1);
      expect(await flaky.locator('.tl-failed').textContent()).toBe('✗');
      expect(await flaky.getAttribute('aria-label')).toMatch(
        /^flaky: error, 1 run, [\d.]+m?s, .* failed \(error\): .*the model refused the task.*, announce to the parent delivered$/,
      );
      expect(await crawler.getAttribute('aria-label')).toMatch(
        /^crawler: killed, 1 run, [\d.]+m?s, .*failed \(killed\)/,
      );
      expect(await crawler.getAttribute('data-failed')).toBe('true');
      // The coordinator ran again when its children reported: its announce is its first run's.
      expect(await row(page, sub('coordinator')).getAttribute('aria-label')).toMatch(
        /^coordinator: done, \d runs, .*, announce to the parent delivered$/,
      );
      // The crawler's announce arrow reaches up to the coordinator's row (2 rows up: 1.5 rows tall).
      const arrow = await crawler.locator('.tl-announce').boundingBox();
      expect(arrow!.height).toBeCloseTo(34 * 1.5, 0);
      expect(await page.locator('#timeline-meta').textContent()).toMatch(/^6 sessions · 2 failed$/);

      const shot = join(tmpdir(), `colloquy-spawn-timeline-${process.pid}.png`);
      await page.screenshot({ path: shot });
      console.log(`spawn timeline screenshot: ${shot}`);

      // Keyboard: the first row holds the focus; arrows move it, Left goes to the parent, Enter opens.
      await row(page, root).focus();
      await page.keyboard.press('ArrowDown');
      await page.keyboard.press('ArrowDown');
      expect(await page.evaluate(() => (document.activeElement as HTMLElement).dataset.key)).toBe(
        sub('hotels'),
      );
      await page.keyboard.press('ArrowLeft');
      expect(await page.evaluate(() => (document.activeElement as HTMLElement).dataset.key)).toBe(
        sub('coordinator'),
      );
      await page.keyboard.press('End');
      await page.keyboard.press('Enter');
      await page.locator('#transcript:not([hidden])').waitFor();
      expect(await page.locator('#transcript-title').textContent()).toBe(sub('flaky'));
      await page.click('#transcript-close');
      expect(await page.locator('#timeline').isVisible()).toBe(true);
      await page.click('#timeline-close');
      expect(await page.locator('#tree').isVisible()).toBe(true);
      expect((page as Page & { problems: string[] }).problems).toEqual([]);
    });

    it('renders a tree of 500 sub-agents quickly, with only the rows in view in the page', async () => {
      const root = 'agent:main:big-root';
      const start = Date.now() - 60_000;
      await server.store.putSession(
        makeSessionRecord(root, { kind: 'main', status: 'done', updatedAt: Date.now() }),
      );
      const put = async (key: string, parent: string, depth: number, n: number) => {
        // The children are among the panel's newest rows, so the root's row has its Timeline button.
        const updatedAt = depth === 1 ? Date.now() - 1000 : start + n;
        await server.store.putSession(
          makeSessionRecord(key, {
            kind: 'subagent',
            spawnedBy: parent,
            spawnDepth: depth,
            label: key.slice(-7),
            status: 'done',
            createdAt: start + n,
            updatedAt,
          }),
        );
        const run: RunRecord = {
          runId: `run-${key}`,
          sessionKey: key,
          lane: 'subagent',
          status: n % 50 === 0 ? 'error' : 'done',
          createdAt: start + n * 100,
          updatedAt: start + n * 100 + 900,
          startedAt: start + n * 100,
          endedAt: start + n * 100 + 900,
          message: 'work',
          deliver: false,
          spawnedBy: parent,
          attempts: 1,
          usage: { inputTokens: 100, outputTokens: 20, totalTokens: 120 },
          ...(n % 50 === 0 ? { error: 'failed' } : {}),
        };
        await server.store.createRun(run);
      };
      let n = 0;
      for (let c = 0; c < 20; c++) {
        const child = `agent:main:subagent:big-${String(c).padStart(2, '0')}`;
        await put(child, root, 1, n++);
        for (let g = 0; g < 24; g++) await put(`${child}-${String(g).padStart(2, '0')}`, child, 2, n++);
      }
      const page = await ownerPage();
      await page.evaluate(() => performance.clearMeasures());
      await page.locator(`.node[data-key="${root}"]`).waitFor();
      // From the click to the rows on screen, timed in the page.
      const firstPaint = await page.evaluate(async (key) => {
        const opened = performance.now();
        const button = `.node[data-key="${CSS.escape(key)}"] > .row .timeline-button`;
        document.querySelector<HTMLButtonElement>(button)!.click();
        while (!document.getElementById('timeline-meta')!.textContent!.startsWith('501 sessions')) {
          await new Promise((resolve) => requestAnimationFrame(resolve));
        }
        await new Promise((resolve) => requestAnimationFrame(resolve));
        return Math.round(performance.now() - opened);
      }, root);
      const inDom = await page.locator('.tl-row').count();
      expect(inDom).toBeLessThan(60);
      // Scroll through the whole tree a screen at a time, as a user would.
      await page.locator('#timeline-rows').evaluate(async (viewport) => {
        for (let top = 0; top < viewport.scrollHeight; top += viewport.clientHeight) {
          viewport.scrollTop = top;
          await new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)));
        }
      });
      await row(page, 'agent:main:subagent:big-19-23').waitFor();
      // An update re-renders only the rows whose session changed.
      await page.locator('#timeline-rows').evaluate((viewport) => {
        viewport.scrollTop = 0;
      });
      await row(page, 'agent:main:subagent:big-00-05').waitFor();
      await page.locator('.tl-row').evaluateAll((rows) => {
        for (const r of rows) (r as HTMLElement & { kept?: boolean }).kept = true;
      });
      await server.runtime.gateway.call('sessions.patch', {
        key: 'agent:main:subagent:big-00-05',
        patch: { label: 'renamed' },
      });
      await row(page, 'agent:main:subagent:big-00-05').locator('.tl-name', { hasText: 'renamed' }).waitFor();
      const rebuilt = await page
        .locator('.tl-row')
        .evaluateAll((rows) =>
          rows
            .filter((r) => !(r as HTMLElement & { kept?: boolean }).kept)
            .map((r) => (r as HTMLElement).dataset.key),
        );
      expect(rebuilt).toEqual(['agent:main:subagent:big-00-05']);

      const renders = await page.evaluate(() =>
        performance.getEntriesByName('colloquy:timeline-render').map((entry) => entry.duration),
      );
      const [first, ...rest] = renders;
      const sorted = [...rest].sort((a, b) => a - b);
      const median = sorted[Math.floor(sorted.length / 2)]!;
      const worst = sorted.at(-1)!;
      console.log(
        `timeline with 500 sub-agents: click to rows on screen ${firstPaint} ms (sessions.tree, the frame, the first render); ` +
          `first render ${first!.toFixed(1)} ms (with the page's layout); then ${rest.length} renders while scrolling ` +
          `through all rows and one update: median ${median.toFixed(1)} ms, worst ${worst.toFixed(1)} ms; ` +
          `${inDom} of 501 rows in the DOM (load average ${loadavg()[0]!.toFixed(1)})`,
      );
      // One frame is 16 ms: scrolling and updates stay well within it.
      expect(median).toBeLessThan(16);
    });
  },
);
