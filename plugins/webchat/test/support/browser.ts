import { existsSync } from 'node:fs';
import { type Browser, chromium, type Page } from 'playwright-core';

/** The Debian Chromium the browser suites drive. */
/** The Chromium the browser tests drive: `COLLOQUY_CHROMIUM`, else Debian's package. */
export const CHROMIUM = process.env.COLLOQUY_CHROMIUM ?? '/usr/bin/chromium';
export const HAS_CHROMIUM = existsSync(CHROMIUM);

/**
 * Launches headless Chromium with the flags CI uses. Playwright gives every launch a fresh temporary
 * profile (its own `--user-data-dir`) and deletes it on close.
 */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
    ],
    timeout: 30_000,
  });
}

/** The visitor id behind a page (the value part of its signed visitor cookie), which is its direct chat id. */
export async function visitorChat(page: Page): Promise<{ chat: string }> {
  const cookies = await page.context().cookies();
  const signed = cookies.find((c) => c.name === 'colloquy_vid')?.value ?? '';
  return { chat: signed.split('.')[0]! };
}

/**
 * Collects the page's uncaught errors and console errors from now on.
 *
 * @returns the list they are added to (a test expects it empty at its end)
 */
export function trackProblems(page: Page): string[] {
  const problems: string[] = [];
  page.on('pageerror', (error) => problems.push(error.message));
  page.on('console', (msg) => {
    if (msg.type() === 'error') problems.push(msg.text());
  });
  return problems;
}
