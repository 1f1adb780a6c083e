import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { silentLogger } from '@colloquy/core';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { InboundLedger } from './inbound-ledger.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'wa-ledger-'));
});
afterEach(() => rm(dir, { recursive: true, force: true }));

describe('InboundLedger', () => {
  it('answers nothing from before the first connection of a new link', async () => {
    const ledger = await InboundLedger.load(dir, silentLogger);
    expect(ledger.isSinceLastConnection(Date.now())).toBe(false);
    ledger.opened(10_500);
    expect(ledger.isSinceLastConnection(9_000)).toBe(false);
    expect(ledger.isSinceLastConnection(10_000)).toBe(true);
    // Its write settles before the folder is removed.
    await ledger.flush();
  });

  it('opens the catch-up window where the previous connection ended, across a restart', async () => {
    const first = await InboundLedger.load(dir, silentLogger);
    first.opened(1_000);
    first.record('A', 5_000);
    first.stillConnected(8_000);
    await first.flush();
    const second = await InboundLedger.load(dir, silentLogger);
    expect(second.has('A')).toBe(true);
    second.opened(60_000);
    expect(second.isSinceLastConnection(7_000)).toBe(false);
    expect(second.isSinceLastConnection(8_000)).toBe(true);
    // The window stays where it opened while this connection lives on.
    second.record('B', 90_000);
    expect(second.isSinceLastConnection(30_000)).toBe(true);
    await second.flush();
  });

  it('starts empty from a corrupt file', async () => {
    await writeFile(join(dir, 'inbound-ledger.json'), '{ not json');
    const ledger = await InboundLedger.load(dir, silentLogger);
    expect(ledger.has('A')).toBe(false);
    ledger.record('A', 1);
    await ledger.flush();
    expect(JSON.parse(await readFile(join(dir, 'inbound-ledger.json'), 'utf8'))).toEqual({
      version: 1,
      connectedUntil: 1,
      handled: ['A'],
    });
  });
});
