import { FakeTelegram } from '@colloquy/testkit/telegram-fake';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AppProcess, runCliProcess, startApp } from './support/app-process.js';

const TOKEN = '4004:app-e2e-token';
const ALICE = { id: 42, is_bot: false, first_name: 'Alice', username: 'alice' };
const DM = { id: 42, type: 'private' as const, first_name: 'Alice' };

let fake: FakeTelegram;
let app: AppProcess;

beforeAll(async () => {
  fake = await FakeTelegram.start();
  fake.addBot(TOKEN, { id: 4004, username: 'colloquy_test_bot' });
  fake.addChat(42, { type: 'private' });
  app = await startApp({
    channels: { telegram: { accounts: [{ token: TOKEN, apiRoot: fake.apiRoot }] } },
    app: { owners: { telegram: ['@alice'] } },
  });
}, 30_000);

afterAll(async () => {
  await app?.cleanup();
  await fake?.close();
});

const cli = (...args: string[]) => runCliProcess([...args, '--state-dir', 'state'], { cwd: app.dir });

describe('the app with Telegram turned on by its config (grammY against a fake Bot API)', () => {
  it('registers the slash commands with Telegram', async () => {
    const names = await fake.waitFor(() => {
      const commands = fake.commands(TOKEN);
      return commands.length > 0 ? commands.map((c) => c.command) : undefined;
    });
    expect(names).toEqual([
      'help',
      'status',
      'sessions',
      'history',
      'search',
      'send',
      'spawn',
      'subagents',
      'tree',
      'new',
    ]);
  });

  it('pairs a stranger through `colloquy pairing approve`, then answers commands and chat', async () => {
    fake.pushMessage(TOKEN, { chat: DM, from: ALICE, text: 'hello' });
    const pairing = await fake.waitFor(() =>
      fake.sentTo(42).find((m) => m.visibleText.includes('pairing approve')),
    );
    const code = /colloquy pairing approve telegram ([A-Z0-9]+)/.exec(pairing.visibleText)![1]!;

    const listed = await cli('pairing', 'list', 'telegram');
    expect(listed.stdout).toContain(`${code}  @alice (42)`);
    const approved = await cli('pairing', 'approve', 'telegram', code.toLowerCase());
    expect(approved.code).toBe(0);
    expect(approved.stdout.trim()).toBe('Approved @alice (42) on telegram.');

    fake.pushMessage(TOKEN, { chat: DM, from: ALICE, text: '/status' });
    const status = await fake.waitFor(() => fake.sentTo(42).find((m) => m.visibleText.includes('Session:')));
    expect(status.visibleText).toContain('Session: agent:main:telegram:dm:42 (telegram, idle)');
    expect(status.visibleText).toContain('You: telegram user 42 (owner)');

    fake.pushMessage(TOKEN, { chat: DM, from: ALICE, text: 'are you there?' });
    const noModel = await fake.waitFor(() => fake.sentTo(42).find((m) => m.visibleText.includes('no model')));
    expect(noModel.visibleText).toContain('COLLOQUY_MODEL=');

    const status2 = await cli('status');
    expect(status2.stdout).toMatch(/Channels: webchat connected, telegram connected/);
  });
});
