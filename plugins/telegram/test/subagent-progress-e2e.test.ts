import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type ColloquyConfigInput, resolveConfig } from '@colloquy/core';
import type { ModelRequest } from '@colloquy/core/model';
import { createRuntime, type Runtime } from '@colloquy/runtime';
import { openSqliteStore } from '@colloquy/store-sqlite';
import { createScriptedModel, lastUserText, type ScriptedReply } from '@colloquy/testkit';
import { FakeTelegram, type SentMessage } from '@colloquy/testkit/telegram-fake';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createTelegramPlugin } from '../src/index.js';

const TOKEN = '5005:progress-token';
const BOT = { id: 5005, username: 'progress_bot' };
const ALICE = { id: 77, is_bot: false, first_name: 'Alice' };
const CHAT = { id: 77, type: 'private' as const, first_name: 'Alice' };
const LABELS = ['sources', 'draft', 'check'];

let fake: FakeTelegram;
let stateDir: string;
let runtime: Runtime | undefined;

beforeEach(async () => {
  fake = await FakeTelegram.start();
  fake.addBot(TOKEN, BOT);
  fake.addChat(CHAT.id, { type: 'private' });
  stateDir = await mkdtemp(join(tmpdir(), 'colloquy-tg-progress-'));
});

afterEach(async () => {
  await runtime?.shutdown({ drainMs: 200 });
  runtime = undefined;
  await fake.close();
  await rm(stateDir, { recursive: true, force: true });
});

const isSubagent = (request: ModelRequest): boolean => request.system.includes('You are a sub-agent');

/** The parent spawns three helpers (each working `childMs`, the last twice that), then waits for them. */
function script(childMs: number) {
  return (request: ModelRequest): ScriptedReply | string => {
    if (isSubagent(request)) {
      const slow = (lastUserText(request) ?? '').includes('check');
      return { text: 'helper result', delayMs: slow ? childMs * 2 : childMs };
    }
    if (request.messages.at(-1)?.role === 'toolResult') return 'Three helpers are on it.';
    if ((lastUserText(request) ?? '').startsWith('[Announce')) return 'ANNOUNCE_SKIP';
    return {
      toolCalls: LABELS.map((label) => ({
        name: 'sessions_spawn',
        arguments: { task: `Task: ${label}`, label },
      })),
    };
  };
}

/** Boots the runtime on the SQLite file in the state dir (a restart opens it again). */
async function boot(childMs: number, config: ColloquyConfigInput = {}): Promise<Runtime> {
  const model = createScriptedModel(script(childMs));
  runtime = createRuntime({
    config: resolveConfig({ ...config, agents: { defaults: { model: 'scripted/test' } } }),
    store: openSqliteStore({ file: join(stateDir, 'colloquy.db') }),
    plugins: [
      createTelegramPlugin({
        config: { accounts: [{ token: TOKEN, apiRoot: fake.apiRoot }], dmPolicy: 'open' },
        stateDir,
        pollTimeoutSeconds: 1,
        startTimeoutMs: 3000,
      }),
    ],
    models: (ref) => (ref.startsWith('scripted/') ? { provider: model, modelId: ref.slice(9) } : undefined),
    workspaceDir: join(stateDir, 'workspaces'),
    subagents: { pollMs: 20, retryBaseMs: 20, retryMaxMs: 100 },
    progress: { showAfterMs: 50, editIntervalMs: 150 },
  });
  await runtime.start();
  return runtime;
}

const progressLines = (): SentMessage[] =>
  fake.sentTo(CHAT.id).filter((m) => /^\d+ helpers? (working|finished)/.test(m.visibleText));

function ask(): void {
  fake.pushMessage(TOKEN, { chat: CHAT, from: ALICE, text: 'write a report' });
}

describe('sub-agent progress in a Telegram chat (runtime, scripted model, fake Bot API)', () => {
  it('shows one status message while three helpers work, edits it in place and finalises it', async () => {
    await boot(300);
    ask();
    const line = await fake.waitFor(() => progressLines()[0], 5000, 'the progress message');
    expect(line.visibleText).toMatch(/^3 helpers working: sources \((\d+ s|queued)\)/);
    await fake.waitFor(() => /finished/.test(line.visibleText) || undefined, 5000, 'the finished line');
    expect(line.visibleText).toMatch(/^3 helpers finished in \d+ s$/);
    expect(line.edits).toBeGreaterThanOrEqual(2);
    expect(progressLines(), 'one status message').toHaveLength(1);
    expect(fake.chatActions.some((a) => a.chatId === String(CHAT.id) && a.action === 'typing')).toBe(true);
  });

  it('finalises the status message after a restart while helpers were still working', async () => {
    await boot(1500);
    ask();
    const line = await fake.waitFor(() => progressLines()[0], 5000, 'the progress message');
    await runtime!.shutdown({ drainMs: 0 });
    expect(line.visibleText).toMatch(/working/);

    await boot(100);
    await fake.waitFor(() => /finished/.test(line.visibleText) || undefined, 8000, 'the line finalised');
    expect(line.visibleText).toMatch(/^3 helpers finished in \d+ s$/);
    expect(progressLines(), 'no second status message').toHaveLength(1);
  });

  it('shows no status message where channels.telegram.progress is false', async () => {
    await boot(300, { channels: { telegram: { progress: false } } });
    ask();
    await fake.waitFor(() => fake.sentTo(CHAT.id).find((m) => m.visibleText === 'Three helpers are on it.'));
    // Every helper worked 300 ms (a line shows after 50 ms) and ended.
    await fake.waitFor(
      async () => {
        const list = await runtime!.gateway.call('sessions.list', {
          kinds: ['subagent'],
          withLatestRun: true,
        });
        const ended = Object.values(list.latestRuns ?? {}).filter((run) => run.status === 'done');
        return ended.length === LABELS.length || undefined;
      },
      5000,
      'every helper done',
    );
    expect(progressLines()).toEqual([]);
  });
});
