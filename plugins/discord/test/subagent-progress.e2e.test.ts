import type { ColloquyConfigInput } from '@colloquy/core';
import type { ModelRequest } from '@colloquy/core/model';
import type { ScriptFn, ScriptStep } from '@colloquy/testkit';
import { FakeDiscord, type FakeUser } from '@colloquy/testkit/discord-fake';
import { createTestHarness, type TestHarness } from '@colloquy/testkit/harness';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createDiscordPlugin } from '../src/index.js';

const TOKEN = 'progress-e2e-token';
const RESULT = 'Tides peak twice a day because the moon pulls the oceans.';

const isChild = (request: ModelRequest) => request.system.includes('You are a sub-agent');

/** The text of the last user-role message (announces carry their provenance line first). */
function lastUser(request: ModelRequest): string {
  const last = [...request.messages].reverse().find((m) => m.role === 'user');
  return typeof last?.content === 'string' ? last.content : JSON.stringify(last?.content ?? '');
}

/**
 * A parent that does what its announce prompt asks: told the result is already in a thread, it
 * posts one line pointing there; otherwise it passes the result on in full.
 */
function parentAnswer(request: ModelRequest): ScriptStep {
  const text = lastUser(request);
  const thread = /already posted this result in full in its thread (\d+)/.exec(text);
  if (thread) return `The researcher posted its findings in <#${thread[1]}>.`;
  const result = /Result:\n([^\n]*)/.exec(text)?.[1];
  return `The researcher found: ${result ?? '(nothing)'}`;
}

describe('sub-agents on Discord: progress line and thread-bound results', () => {
  let fake: FakeDiscord;
  let harness: TestHarness | undefined;
  let alice: FakeUser;
  let general: string;

  beforeEach(async () => {
    fake = await FakeDiscord.start({
      bots: [{ token: TOKEN, username: 'colloquy' }],
      guilds: [{ name: 'Progress Guild', channels: ['general'] }],
    });
    alice = fake.addUser('alice');
    general = fake.channelId('general');
  });

  afterEach(async () => {
    await harness?.close();
    harness = undefined;
    await fake.close();
  });

  async function boot(script: ScriptFn, config: ColloquyConfigInput = {}): Promise<TestHarness> {
    harness = await createTestHarness({
      script,
      config,
      plugins: [
        createDiscordPlugin({
          config: { accounts: [{ accountId: 'main', token: TOKEN }] },
          rest: { api: fake.apiRoot },
        }),
      ],
      runtime: { progress: { showAfterMs: 50, editIntervalMs: 150 } },
    });
    return harness;
  }

  const ask = (content: string) =>
    fake.say({ channelId: general, author: alice, content: `<@${fake.bots[0]!.user.id}> ${content}` });

  it('posts a thread-bound child’s result once, in its thread, and a one-line pointer in the channel', async () => {
    await boot((request) => {
      if (isChild(request)) return RESULT;
      if (request.messages.at(-1)?.role === 'toolResult') return 'I started a researcher in its own thread.';
      if (lastUser(request).startsWith('[Announce')) return parentAnswer(request);
      return {
        toolCalls: [
          { name: 'sessions_spawn', arguments: { task: 'Research the tides', label: 'Tides', thread: true } },
        ],
      };
    });
    ask('research the tides');
    const thread = await fake.waitFor(() => fake.threadsOf(general)[0], 8000, 'the thread');
    const pointer = await fake.waitFor(
      () => fake.botMessages(general).find((m) => m.content.includes('posted its findings')),
      8000,
      'the parent’s pointer to the thread',
    );
    expect(pointer.content).toBe(`The researcher posted its findings in <#${thread.id}>.`);
    const everywhere = fake.sentByBots.filter((m) => m.content.includes(RESULT));
    expect(everywhere, 'the result appears once').toHaveLength(1);
    expect(everywhere[0]!.channel_id).toBe(thread.id);
  });

  it('points to the thread in the fallback line when the parent cannot answer the result', async () => {
    await boot((request) => {
      if (isChild(request)) return RESULT;
      if (request.messages.at(-1)?.role === 'toolResult') return 'I started a researcher in its own thread.';
      if (lastUser(request).startsWith('[Announce')) return { error: new Error('model down') };
      return {
        toolCalls: [
          { name: 'sessions_spawn', arguments: { task: 'Research the tides', label: 'Tides', thread: true } },
        ],
      };
    });
    ask('research the tides');
    const fallback = await fake.waitFor(
      () => fake.botMessages(general).find((m) => m.content.startsWith('Tides finished')),
      8000,
      'the fallback line',
    );
    expect(fallback.content).toBe('Tides finished (ok): the result is in its thread.');
    expect(fake.sentByBots.filter((m) => m.content.includes(RESULT))).toHaveLength(1);
  });

  it('shows one progress line for several helpers, edited in place and finalised', async () => {
    await boot((request) => {
      if (isChild(request)) {
        const slow = lastUser(request).includes('slowly');
        return { text: 'helper result', delayMs: slow ? 900 : 400 };
      }
      if (request.messages.at(-1)?.role === 'toolResult') return 'Three helpers are on it.';
      if (lastUser(request).startsWith('[Announce')) return 'ANNOUNCE_SKIP';
      return {
        toolCalls: [
          { name: 'sessions_spawn', arguments: { task: 'Find sources', label: 'sources' } },
          { name: 'sessions_spawn', arguments: { task: 'Draft it', label: 'draft' } },
          { name: 'sessions_spawn', arguments: { task: 'Check it slowly', label: 'check' } },
        ],
      };
    });
    ask('write a report');
    const line = await fake.waitFor(
      () => fake.botMessages(general).find((m) => /^\d+ helpers? working/.test(m.content)),
      8000,
      'the progress line',
    );
    const finished = await fake.waitFor(
      () => fake.botMessages(general).find((m) => m.id === line.id && /finished/.test(m.content)),
      8000,
      'the finished line',
    );
    expect(finished.content).toMatch(/^3 helpers finished in \d+ s$/);
    const lines = fake.botMessages(general).filter((m) => /^\d+ helpers? (working|finished)/.test(m.content));
    expect(lines, 'one progress message').toHaveLength(1);
    const edits = fake.requests.filter(
      (r) => r.method === 'PATCH' && r.path.endsWith(`/messages/${line.id}`),
    );
    expect(edits.length).toBeGreaterThanOrEqual(2);
    expect(fake.requests.some((r) => r.method === 'POST' && r.path === `/channels/${general}/typing`)).toBe(
      true,
    );
  });

  it('shows no progress line where channels.discord.progress is false', async () => {
    await boot(
      (request) => {
        if (isChild(request)) return { text: 'helper result', delayMs: 400 };
        if (request.messages.at(-1)?.role === 'toolResult') return 'A helper is on it.';
        if (lastUser(request).startsWith('[Announce')) return 'All done.';
        return {
          toolCalls: [{ name: 'sessions_spawn', arguments: { task: 'Find sources', label: 'sources' } }],
        };
      },
      { channels: { discord: { progress: false } } },
    );
    ask('write a report');
    await fake.waitFor(
      () => fake.botMessages(general).find((m) => m.content === 'All done.'),
      8000,
      'the reply',
    );
    expect(fake.botMessages(general).filter((m) => /helpers? (working|finished)/.test(m.content))).toEqual(
      [],
    );
  });
});
