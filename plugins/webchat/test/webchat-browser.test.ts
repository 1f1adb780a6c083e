import { mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { subagentSessionKey } from '@colloquy/core/internal';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { CHROMIUM, HAS_CHROMIUM, launchChromium, trackProblems, visitorChat } from './support/browser.js';
import { type RuntimeHost, startRuntimeHost, streamed } from './support/runtime-host.js';
import { ADMIN_TOKEN } from './support/start.js';

const OUT = fileURLToPath(new URL('../test-output/', import.meta.url));

const RICH_REPLY = [
  'Sure, here is a short plan for **your trip**:',
  '',
  '1. Book the train with `rail.example`',
  '2. Pack light: *one bag* only',
  '',
  '| Day | City |',
  '|:----|-----:|',
  '| 1 | Lyon |',
  '',
  '```js',
  'const total = days * budget;',
  '```',
  '',
  'More at [the guide](https://example.com/guide).',
].join('\n');

if (!HAS_CHROMIUM) {
  console.warn(
    `webchat browser tests skipped: ${CHROMIUM} is absent (apt-get install chromium, or set COLLOQUY_CHROMIUM)`,
  );
}

describe.skipIf(!HAS_CHROMIUM)('web chat in Chromium', { timeout: 45_000 }, () => {
  let browser: Browser;
  let server: RuntimeHost;
  const contexts: BrowserContext[] = [];

  beforeAll(async () => {
    mkdirSync(OUT, { recursive: true });
    browser = await launchChromium();
    server = await startRuntimeHost(
      (text) => {
        if (text.startsWith('plan')) return streamed(RICH_REPLY, 12);
        if (text.startsWith('evil')) return { text: EVIL_REPLY };
        if (text.startsWith('research')) return { text: 'Found three sources.', delayMs: 2500 };
        return streamed(`You said: ${text}`);
      },
      { title: 'Colloquy', assistantName: 'Ada' },
    );
  }, 60_000);

  afterEach(async () => {
    for (const context of contexts.splice(0)) await context.close();
  });

  afterAll(async () => {
    await server?.stop();
    await browser?.close();
  });

  async function open(
    path = '',
    options: { colorScheme?: 'light' | 'dark'; width?: number; height?: number } = {},
  ): Promise<Page> {
    const context = await browser.newContext({
      colorScheme: options.colorScheme ?? 'light',
      viewport: { width: options.width ?? 1100, height: options.height ?? 760 },
      deviceScaleFactor: 1,
    });
    contexts.push(context);
    const page = await context.newPage();
    (page as Page & { problems: string[] }).problems = trackProblems(page);
    await page.goto(new URL(path, server.base).href);
    await page.waitForSelector('#status[data-state="online"]', { timeout: 10_000 });
    return page;
  }

  async function say(page: Page, text: string): Promise<void> {
    await page.fill('#input', text);
    await page.press('#input', 'Enter');
  }

  it('sends a message and shows the streamed, rendered reply', async () => {
    const page = await open();
    await say(page, 'plan a trip to Lyon');
    await page.locator('.msg.streaming .bubble', { hasText: 'plan for' }).waitFor();
    await page.screenshot({ path: `${OUT}webchat-streaming.png` });
    const final = page.locator('.msg[data-role="assistant"]:not(.streaming)');
    await final.waitFor({ timeout: 10_000 });
    await expect
      .poll(() => page.locator('.msg[data-mine="true"] .bubble').textContent())
      .toBe('plan a trip to Lyon');
    expect(await final.locator('strong').first().textContent()).toBe('your trip');
    expect(await final.locator('ol > li').count()).toBe(2);
    expect(await final.locator('table td').count()).toBe(2);
    expect(await final.locator('pre code').textContent()).toBe('const total = days * budget;');
    const link = final.locator('a');
    expect(await link.getAttribute('href')).toBe('https://example.com/guide');
    expect(await link.getAttribute('rel')).toBe('noopener noreferrer nofollow');
    expect(await page.locator('.msg.streaming').count()).toBe(0);
    await page.screenshot({ path: `${OUT}webchat-light.png` });
    expect((page as Page & { problems: string[] }).problems).toEqual([]);
  });

  it('keeps the conversation after a reload', async () => {
    const page = await open();
    await say(page, 'remember the blue door');
    await page.locator('.msg[data-role="assistant"]', { hasText: 'remember the blue door' }).waitFor();
    await page.reload();
    await page.waitForSelector('#status[data-state="online"]');
    await page
      .locator('.msg[data-role="assistant"]', { hasText: 'You said: remember the blue door' })
      .waitFor();
    expect(await page.locator('.msg[data-mine="true"]').count()).toBe(1);
  });

  it('renders script injection from visitors and the model as inert text', async () => {
    const page = await open();
    const attack = '<img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script>';
    await say(page, `evil ${attack}`);
    const reply = page.locator('.msg[data-role="assistant"]:not(.streaming)');
    await reply.waitFor();
    await expect
      .poll(() => page.locator('.msg[data-mine="true"] .bubble').textContent())
      .toBe(`evil ${attack}`);
    expect(await page.evaluate(() => (window as { __pwned?: number }).__pwned)).toBeUndefined();
    expect(await page.locator('.messages img, .messages script, .messages iframe').count()).toBe(0);
    expect(await reply.locator('a').count()).toBe(1);
    expect(await reply.locator('a').getAttribute('href')).toBe('https://safe.example/');
    expect(await reply.textContent()).toContain('<script>window.__pwned=3</script>');
  });

  it('keeps a pasted message over the limit whole, says how much is allowed and does not send it', async () => {
    const page = await open();
    await say(page, 'z'.repeat(20_000));
    await page
      .locator('#limit', { hasText: 'Your message is 20,000 characters; the limit is 8,000.' })
      .waitFor();
    expect(await page.inputValue('#input')).toHaveLength(20_000);
    expect(await page.locator('#send').isDisabled()).toBe(true);
    expect(await page.locator('.msg[data-mine="true"]').count()).toBe(0);
    await page.fill('#input', '');
    expect(await page.locator('#limit').isHidden()).toBe(true);
    await say(page, 'short one');
    await page.locator('.msg[data-role="assistant"]', { hasText: 'You said: short one' }).waitFor();
  });

  it('shows who is typing in a room and answers when mentioned', async () => {
    const alice = await open('?room=lobby');
    const bob = await open('?room=lobby');
    expect(await alice.locator('#subtitle').textContent()).toContain('#lobby');
    await alice.evaluate(() => {
      localStorage.setItem('colloquy.webchat.name', 'Alice');
    });
    await alice.reload();
    await alice.waitForSelector('#status[data-state="online"]');
    await alice.type('#input', 'hello', { delay: 20 });
    await bob.locator('#typing', { hasText: 'Alice is typing' }).waitFor();
    await alice.press('#input', 'Enter');
    await bob.locator('.msg .who', { hasText: 'Alice' }).waitFor();
    await say(bob, '@ada are you there?');
    await alice
      .locator('.msg[data-role="assistant"]', { hasText: 'You said: @ada are you there?' })
      .waitFor();
    expect(await alice.locator('.msg[data-role="assistant"]').count()).toBe(1);
    await bob.screenshot({ path: `${OUT}webchat-room.png` });
  });

  it('looks right in dark mode on a phone', async () => {
    const page = await open('', { colorScheme: 'dark', width: 390, height: 780 });
    await say(page, 'plan something in the dark');
    await page.locator('.msg[data-role="assistant"]:not(.streaming)').waitFor();
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    expect(overflow).toBeLessThanOrEqual(0);
    await page.screenshot({ path: `${OUT}webchat-dark-mobile.png` });
    await page.setViewportSize({ width: 320, height: 640 });
    expect(
      await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth),
    ).toBeLessThanOrEqual(0);
    const send = (await page.locator('#send').boundingBox())!;
    expect(send.x + send.width).toBeLessThanOrEqual(320);
  });

  it('lets the owner open a read-only transcript of a session from the panel', async () => {
    const visitor = await open();
    await say(visitor, 'the parcel goes to Ghent');
    await visitor.locator('.msg[data-role="assistant"]:not(.streaming)').waitFor();
    const { chat } = await visitorChat(visitor);
    const { sessions } = await server.runtime.gateway.call('sessions.list', {});
    const key = sessions.find((s) => s.deliveryContext?.to === chat)!.key;
    const owner = await open(`?admin=${ADMIN_TOKEN}`);
    await owner.locator('#panel:not([hidden])').waitFor();
    await owner.locator(`.node[data-key="${key}"] .row`).first().click();
    const list = owner.locator('#transcript:not([hidden]) #transcript-list');
    await list.locator('.transcript-msg[data-role="assistant"]').waitFor();
    expect(await list.locator('.transcript-msg[data-role="user"] .transcript-text').textContent()).toBe(
      'the parcel goes to Ghent',
    );
    expect(await list.locator('.transcript-msg[data-role="assistant"] .transcript-text').textContent()).toBe(
      'You said: the parcel goes to Ghent',
    );
    expect(await owner.locator('#transcript-title').textContent()).toBe(key);
    expect(await owner.locator('#transcript textarea, #transcript input').count()).toBe(0);
    await owner.screenshot({ path: `${OUT}webchat-owner-transcript.png` });
    await owner.click('#transcript-close');
    expect(await owner.locator('#tree').isVisible()).toBe(true);
  });

  it('shows the owner a live session tree and hides it from visitors', async () => {
    const visitor = await open();
    expect(await visitor.locator('#panel-button').isHidden()).toBe(true);
    const owner = await open(`?admin=${ADMIN_TOKEN}`);
    expect(new URL(owner.url()).search).toBe('');
    await owner.locator('#panel:not([hidden])').waitFor();
    await say(visitor, 'start a sub-agent');
    await visitor.locator('.msg[data-role="assistant"]:not(.streaming)').waitFor();
    const { chat } = await visitorChat(visitor);
    const { sessions } = await server.runtime.gateway.call('sessions.list', {});
    const parent = sessions.find((s) => s.deliveryContext?.to === chat)!;
    const childKey = subagentSessionKey('main');
    const { runId } = await server.runtime.gateway.call('agent', {
      sessionKey: childKey,
      message: 'research the best trains to Lyon',
      lane: 'subagent',
      spawnedBy: parent.key,
      session: { label: 'train researcher' },
    });
    const node = owner.locator(`.node[data-key="${childKey}"][data-status="running"]`);
    await node.waitFor();
    expect(await owner.locator(`.node[data-key="${parent.key}"] .children .node`).count()).toBe(1);
    expect(await node.locator('.row-name').first().textContent()).toBe('train researcher');
    await owner.waitForTimeout(1100);
    await owner.screenshot({ path: `${OUT}webchat-owner.png` });
    await server.runtime.gateway.call('agent.wait', { runId, timeoutMs: 10_000 });
    await owner.locator(`.node[data-key="${childKey}"][data-status="done"]`).waitFor();
  });

  it('shows sub-agent progress as one bubble edited in place, read once per change, and finalised', async () => {
    const host = await startRuntimeHost(
      (text) => (text.startsWith('research') ? { text: 'Found it.', delayMs: 2600 } : { text: 'Noted.' }),
      { title: 'Colloquy', assistantName: 'Ada' },
      undefined,
      { progress: { showAfterMs: 300, editIntervalMs: 400 } },
    );
    try {
      const context = await browser.newContext({ viewport: { width: 900, height: 700 } });
      contexts.push(context);
      const page = await context.newPage();
      const problems = trackProblems(page);
      await page.goto(host.base);
      await page.waitForSelector('#status[data-state="online"]', { timeout: 10_000 });
      await say(page, 'hello');
      await page.locator('.msg[data-role="assistant"]', { hasText: 'Noted.' }).waitFor();
      const { chat } = await visitorChat(page);
      const { sessions } = await host.runtime.gateway.call('sessions.list', {});
      const parent = sessions.find((s) => s.deliveryContext?.to === chat)!;
      await host.runtime.gateway.call('agent', {
        sessionKey: subagentSessionKey('main'),
        message: 'research the trains',
        lane: 'subagent',
        spawnedBy: parent.key,
        session: { label: 'research' },
      });

      const progress = page.locator('.msg[data-role="assistant"]', {
        hasText: /1 helper (working|finished)/,
      });
      const bubble = progress.locator('.bubble');
      await progress.waitFor();
      expect(await bubble.textContent()).toMatch(/^1 helper working: research \(\d+ s\)$/);
      const first = (await bubble.textContent())!;
      // Marks the element, then records every change inside the live region from now on.
      await progress.evaluate((item) => {
        (item as HTMLElement & { probe?: boolean }).probe = true;
        const changes: string[] = [];
        (window as unknown as { changes: string[] }).changes = changes;
        new MutationObserver((records) => {
          for (const record of records) {
            const target = record.target instanceof Element ? record.target : record.target.parentElement;
            const inBubble = target?.closest('.bubble') === item.querySelector('.bubble');
            const items = [...record.addedNodes, ...record.removedNodes].filter((n) => n.nodeName === 'LI');
            changes.push(inBubble && items.length === 0 ? 'bubble' : `other:${target?.className}`);
          }
        }).observe(document.querySelector('#messages')!, {
          childList: true,
          subtree: true,
          characterData: true,
        });
      });
      await expect.poll(() => bubble.textContent(), { timeout: 5000 }).not.toBe(first);
      expect(await bubble.textContent()).toMatch(/^1 helper working: research \(\d+ s\)$/);
      const changes = await page.evaluate(() => (window as unknown as { changes: string[] }).changes);
      expect(changes.length).toBeGreaterThan(0);
      expect(
        changes.every((c) => c === 'bubble'),
        changes.join(', '),
      ).toBe(true);
      await page.screenshot({ path: `${OUT}webchat-progress.png` });

      await expect
        .poll(() => bubble.textContent(), { timeout: 10_000 })
        .toMatch(/^1 helper finished in \d+ s$/);
      expect(await progress.count(), 'one progress bubble').toBe(1);
      expect(await progress.evaluate((item) => (item as HTMLElement & { probe?: boolean }).probe)).toBe(true);
      // What Chromium tells a screen reader: the list is a polite live region that reads additions and
      // text changes (not removals) and not as a whole; a change inside the atomic bubble is read as
      // the bubble's whole text, once.
      const cdp = await context.newCDPSession(page);
      const { result } = await cdp.send('Runtime.evaluate', {
        expression: 'document.getElementById("messages")',
      });
      const { nodes } = await cdp.send('Accessibility.getPartialAXTree', {
        objectId: result.objectId!,
        fetchRelatives: false,
      });
      const live = Object.fromEntries((nodes[0]?.properties ?? []).map((p) => [p.name, p.value.value]));
      expect(live).toMatchObject({ live: 'polite', atomic: false, relevant: 'additions text' });
      expect(await bubble.getAttribute('aria-atomic')).toBe('true');
      expect(problems).toEqual([]);
    } finally {
      await host.stop();
    }
  });
});

const EVIL_REPLY = [
  'Here is <script>window.__pwned=3</script> and <img src=x onerror="window.__pwned=4">.',
  '[bad](javascript:window.__pwned=5) and [good](https://safe.example/)',
].join('\n\n');
