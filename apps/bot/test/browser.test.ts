import { mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import {
  type FakeReply,
  type OpenAIFake,
  type RecordedRequest,
  startOpenAIFake,
} from '@colloquy/testkit/openai-fake';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AppProcess, startApp } from './support/app-process.js';
import { CHROMIUM, HAS_CHROMIUM, launchBrowser, type TestBrowser } from './support/browser.js';

const OUT = fileURLToPath(new URL('../test-output/', import.meta.url));
const TASK = 'Count the stars in the Lyra constellation.';
const RESULT = 'Lyra has 42 stars bright enough to count.';
const GREETING = ['Hello! ', 'I am the ', 'test model, ', 'streaming ', 'this reply.'];

/** The fake model: greets, spawns a sub-agent on request, lets the child work a while, acknowledges the announce. */
function script(request: RecordedRequest): FakeReply {
  const messages = request.body.messages as { role: string; content: unknown }[];
  const users = messages.filter((m) => m.role === 'user').map((m) => textOf(m.content));
  const last = messages.at(-1);
  if (users[0]?.includes(TASK)) return { text: RESULT, delayMs: 2500 };
  if (last?.role === 'tool')
    return { text: ['I asked a helper ', 'to count them; ', 'it will report back.'], chunkDelayMs: 40 };
  const lastUser = users.at(-1) ?? '';
  if (lastUser.includes('42 stars')) return { text: 'My helper counted 42 stars in Lyra.' };
  if (lastUser.includes('research'))
    return { toolCalls: [{ name: 'sessions_spawn', arguments: { task: TASK, label: 'star counter' } }] };
  return { text: GREETING, chunkDelayMs: 120 };
}

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((p) => (p as { text?: string }).text ?? '').join('');
  return '';
}

if (!HAS_CHROMIUM)
  console.warn(
    `browser test skipped: ${CHROMIUM} is absent (apt-get install chromium, or set COLLOQUY_CHROMIUM)`,
  );

describe.skipIf(!HAS_CHROMIUM)('the reference app in Chromium', () => {
  let fake: OpenAIFake;
  let app: AppProcess;
  let browser: TestBrowser;
  let page: Page;
  const problems: string[] = [];

  beforeAll(async () => {
    mkdirSync(OUT, { recursive: true });
    fake = await startOpenAIFake(script);
    app = await startApp({}, { COLLOQUY_MODEL: 'fake/test-model', OPENAI_BASE_URL: fake.baseURL });
    browser = await launchBrowser();
    page = await browser.context.newPage();
    page.on('pageerror', (error) => problems.push(error.message));
    page.on('console', (msg) => {
      if (msg.type() === 'error') problems.push(msg.text());
    });
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await app?.cleanup();
    await fake?.close();
  });

  async function say(text: string): Promise<void> {
    await page.fill('#input', text);
    await page.press('#input', 'Enter');
  }

  it('streams a reply from the model to a message typed in the page', async () => {
    await page.goto(`${app.webchatUrl}?admin=${app.token}`);
    expect(new URL(page.url()).search).toBe('');
    await page.waitForSelector('#status[data-state="online"]', { timeout: 10_000 });
    await say('hello');
    await page.locator('.msg.streaming .bubble', { hasText: 'I am the' }).waitFor({ timeout: 10_000 });
    const final = page.locator('.msg[data-role="assistant"]:not(.streaming)', {
      hasText: 'streaming this reply.',
    });
    await final.waitFor({ timeout: 10_000 });
    expect((await final.textContent())?.trim()).toContain(GREETING.join(''));
    expect(await page.locator('.msg.streaming').count()).toBe(0);
  });

  it('shows a spawned sub-agent running then done in the owner panel, and its result once, in the parent’s words', async () => {
    await page.locator('#panel:not([hidden])').waitFor({ timeout: 10_000 });
    await say('please research the stars');
    const child = '.node[data-key^="agent:main:subagent:"]';
    const running = page.locator(`${child}[data-status="running"]`);
    await running.waitFor({ timeout: 10_000 });
    expect(await running.locator('.row-name').first().textContent()).toBe('star counter');
    await page.screenshot({ path: `${OUT}app-subagent-running.png` });
    await page.locator(`${child}[data-status="done"]`).waitFor({ timeout: 15_000 });
    expect(await page.locator(child).count()).toBe(1);
    await page
      .locator('.msg[data-role="assistant"]', { hasText: 'My helper counted 42 stars in Lyra.' })
      .waitFor({ timeout: 15_000 });
    await page.waitForTimeout(500);
    expect(await page.locator('.msg[data-role="assistant"]', { hasText: '42 stars' }).count()).toBe(1);
    // The raw completion block (ids, stats) is for the owner's transcript view, not the chat.
    expect(await page.locator('.msg', { hasText: 'Sub-agent' }).count()).toBe(0);
    await page.screenshot({ path: `${OUT}app-subagent-announced.png`, fullPage: true });
    expect(problems).toEqual([]);
  });

  it('renders script injection as text', async () => {
    const attack = '<img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script>';
    await say(attack);
    await expect.poll(() => page.locator('.msg[data-mine="true"] .bubble').last().textContent()).toBe(attack);
    expect(await page.evaluate(() => (globalThis as { __pwned?: number }).__pwned)).toBeUndefined();
    expect(await page.locator('.messages img, .messages script').count()).toBe(0);
  });
});
