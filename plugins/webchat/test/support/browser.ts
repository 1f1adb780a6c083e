import { existsSync } from 'node:fs';
import { type Browser, chromium } from 'playwright-core';

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
