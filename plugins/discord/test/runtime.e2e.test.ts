import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type ChannelPlugin, createSessionTools } from '@colloquy/core';
import type { Store } from '@colloquy/core/store';
import { openSqliteStore } from '@colloquy/store-sqlite';
import { lastUserText, type ScriptFn } from '@colloquy/testkit';
import { FakeDiscord, type FakeUser } from '@colloquy/testkit/discord-fake';
import { createTestHarness, type TestHarness } from '@colloquy/testkit/harness';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDiscordPlugin } from '../src/index.js';

const TOKEN = 'runtime-e2e-token';
const CHILD_KEY = 'agent:main:subagent:7f0c2a4e-2f5b-4a57-9d7e-3c1b9a2f0d11';

const code = Array.from({ length: 70 }, (_, i) => `  total += weights[${i}] * values[${i}]; // term ${i}`);
const LONG_REPLY = [
  'Here is the whole computation, explained step by step. '.repeat(20).trim(),
  '```ts',
  'function weightedSum(weights: number[], values: number[]): number {',
  '  let total = 0;',
  ...code,
  '  return total;',
  '}',
  '```',
  'That is the complete function; each term adds one weighted value. '.repeat(20).trim(),
].join('\n');

/** Replies from the model, chosen by what the user wrote. */
const script: ScriptFn = (request) => {
  const text = lastUserText(request) ?? '';
  if (text.includes('write long')) return LONG_REPLY;
  if (text.includes('slowly')) return { text: 'Done, slowly.', delayMs: 400 };
  return `You said: ${text.split('\n')[0]}`;
};

function discordPlugin(fake: FakeDiscord) {
  return createDiscordPlugin({
    config: { accounts: [{ accountId: 'main', token: TOKEN }] },
    rest: { api: fake.apiRoot },
  });
}

async function boot(
  fake: FakeDiscord,
  store?: Store,
): Promise<{ harness: TestHarness; discord: ChannelPlugin }> {
  const discord = discordPlugin(fake);
  const harness = await createTestHarness({
    script,
    plugins: [discord],
    ...(store ? { store } : {}),
    runtime: {
      commandList: [{ name: 'status', description: 'Show the status of this conversation' }],
      commands: {
        matches: (inbound) => inbound.text.startsWith('/status'),
        answer: async () => 'Status: idle, 0 runs queued.',
      },
    },
  });
  return { harness, discord };
}

describe('Discord plugin through the runtime with the scripted model', () => {
  let fake: FakeDiscord;
  let harness: TestHarness;
  let discord: ChannelPlugin;
  let alice: FakeUser;
  let general: string;
  const bot = () => fake.bots[0]!;
  /** Waits for the bot's next message in a channel after `count` earlier ones. */
  const nextBotMessage = (channelId: string, count: number) =>
    fake.waitFor(() => fake.botMessages(channelId)[count], 8000, `a bot message in ${channelId}`);

  beforeAll(async () => {
    fake = await FakeDiscord.start({
      bots: [{ token: TOKEN, username: 'colloquy' }],
      guilds: [{ name: 'Runtime Guild', channels: ['general'], forums: ['help'] }],
    });
    alice = fake.addUser('alice', { globalName: 'Alice' });
    general = fake.channelId('general');
    ({ harness, discord } = await boot(fake));
  });

  afterAll(async () => {
    await harness.close();
    await fake.close();
  });

  it('answers a DM, quoting the message, with typing shown while the run is active, and no echo loop', async () => {
    const dm = fake.dmChannel(alice);
    const calls = harness.model.callCount;
    const typingBefore = fake.requests.filter((r) => r.path === `/channels/${dm}/typing`).length;
    const question = fake.say({ channelId: dm, author: alice, content: 'please answer slowly' });
    const reply = await nextBotMessage(dm, 0);
    expect(reply.content).toBe('Done, slowly.');
    expect(reply.message_reference?.message_id).toBe(question.id);
    const typing = fake.requests.filter((r) => r.path === `/channels/${dm}/typing`);
    expect(typing.length).toBeGreaterThan(typingBefore);
    expect(typing[0]!.at).toBeLessThan(fake.requests.find((r) => r.path === `/channels/${dm}/messages`)!.at);
    // The reply comes back on the gateway as a DM from the bot: it must not start another run.
    // Gateway events are handled in order: once Alice's next message is answered, the echo before
    // it was dealt with, and a run it started would have been answered first.
    fake.say({ channelId: dm, author: alice, content: 'and then?' });
    expect((await nextBotMessage(dm, 1)).content).toBe('You said: and then?');
    expect(harness.model.callCount).toBe(calls + 2);
    expect(fake.botMessages(dm)).toHaveLength(2);
  });

  it('ignores a guild message without a mention and answers one with a mention', async () => {
    const calls = harness.model.callCount;
    const count = fake.botMessages(general).length;
    fake.say({ channelId: general, author: alice, content: 'talking among ourselves' });
    const asked = fake.say({
      channelId: general,
      author: alice,
      content: `<@${bot().user.id}> what is 2+2?`,
    });
    const reply = await nextBotMessage(general, count);
    expect(reply.content).toBe('You said: what is 2+2?');
    expect(reply.message_reference?.message_id).toBe(asked.id);
    expect(harness.model.callCount).toBe(calls + 1);
  });

  it('answers a forum post in the post, from the post’s own session', async () => {
    const forum = fake.channelId('help');
    const post = fake.forumPost({
      forumId: forum,
      author: alice,
      title: 'Question',
      content: `<@${bot().user.id}> how do forums work?`,
    });
    const reply = await nextBotMessage(post.threadId, 0);
    expect(reply.content).toBe('You said: how do forums work?');
    const key = `agent:main:discord:channel:${forum}:thread:${post.threadId}`;
    expect(await harness.store.getSession(key)).toMatchObject({
      deliveryContext: { to: forum, threadId: post.threadId },
    });
    expect(fake.botMessages(forum)).toEqual([]);
  });

  it('delivers a 5,000-character reply with a code block as valid chunks', async () => {
    expect(LONG_REPLY.length).toBeGreaterThan(5000);
    const count = fake.botMessages(general).length;
    fake.say({ channelId: general, author: alice, content: `<@${bot().user.id}> write long` });
    await fake.waitFor(() => {
      const all = fake.botMessages(general).slice(count);
      return all.length > 0 && all.at(-1)!.content.endsWith('weighted value.') ? all : undefined;
    }, 8000);
    const chunks = fake
      .botMessages(general)
      .slice(count)
      .map((m) => m.content);
    expect(chunks.length).toBeGreaterThanOrEqual(3);
    for (const chunk of chunks) {
      expect(chunk.length).toBeLessThanOrEqual(2000);
      const fences = chunk.split('\n').filter((line) => line.startsWith('```'));
      expect(fences.length % 2, `balanced fences in:\n${chunk.slice(0, 200)}`).toBe(0);
      if (fences.length > 0) expect(fences[0]).toBe('```ts');
    }
    const rejoined = chunks.join('\n').replace(/\n```\n```ts\n/g, '\n');
    expect(rejoined.replace(/\s+/g, '')).toBe(LONG_REPLY.replace(/\s+/g, ''));
  });

  it('waits out a 429 on the reply, then delivers it once', async () => {
    const count = fake.botMessages(general).length;
    fake.rateLimitNext('POST', new RegExp(`^/channels/${general}/messages$`), 0.25);
    const before = fake.requests.length;
    fake.say({ channelId: general, author: alice, content: `<@${bot().user.id}> after the limit` });
    const reply = await nextBotMessage(general, count);
    expect(reply.content).toBe('You said: after the limit');
    const posts = fake.requests.slice(before).filter((r) => r.path === `/channels/${general}/messages`);
    expect(posts.map((r) => r.status)).toEqual([429, 200]);
    expect(posts[1]!.at - posts[0]!.at).toBeGreaterThanOrEqual(250);
  });

  it('ignores other bots even when they mention it', async () => {
    const calls = harness.model.callCount;
    const otherBot = fake.addUser('helper-bot', { bot: true });
    fake.say({ channelId: general, author: otherBot, content: `<@${bot().user.id}> ping from a bot` });
    fake.say({ channelId: fake.dmChannel(otherBot), author: otherBot, content: 'a DM from a bot' });
    // Gateway events are handled in order, and another bot's message is dropped as it comes in:
    // once Alice's later mention is answered, both bots' messages were dealt with.
    const count = fake.botMessages(general).length;
    fake.say({ channelId: general, author: alice, content: `<@${bot().user.id}> after the bots` });
    expect((await nextBotMessage(general, count)).content).toBe('You said: after the bots');
    expect(harness.model.callCount).toBe(calls + 1);
  });

  it('routes a bound thread to its session both ways', async () => {
    const target = await discord.createThread!({
      parent: { channel: 'discord', to: general, accountId: 'main' },
      title: 'Child: research',
      sessionKey: CHILD_KEY,
    });
    expect(await harness.store.getThreadBinding('discord', 'main', target.threadId)).toMatchObject({
      sessionKey: CHILD_KEY,
      conversationId: general,
    });
    // A human writes in the thread without mentioning the bot: the bound session answers there.
    fake.say({ channelId: target.threadId, author: alice, content: 'how far along are you?' });
    const reply = await nextBotMessage(target.threadId, 0);
    expect(reply.content).toBe('You said: how far along are you?');
    const transcript = await harness.transcript(CHILD_KEY);
    expect(transcript.map((m) => m.role)).toEqual(['user', 'assistant']);
  });

  it('answers a slash command by deferring at once and editing in the answer', async () => {
    const commands = await fake.waitFor(() =>
      fake.registeredCommands.get(`${bot().applicationId}:${fake.guilds[0]!.id}`),
    );
    expect((commands as { name: string }[]).map((c) => c.name)).toEqual(['status']);
    const calls = harness.model.callCount;
    const token = fake.slashCommand({ channelId: general, user: alice, name: 'status' });
    const interaction = await fake.waitFor(() => {
      const record = fake.interactions.get(token);
      return record?.original ? record : undefined;
    });
    expect(interaction.callback?.type).toBe(5);
    expect(interaction.callback!.at - interaction.dispatchedAt).toBeLessThan(3000);
    expect(interaction.original?.content).toBe('Status: idle, 0 runs queued.');
    expect(harness.model.callCount).toBe(calls);
  });
});

describe('sessions_spawn with thread=true through the runtime', () => {
  let fake: FakeDiscord;
  let harness: TestHarness;

  /** The parent spawns a researcher in a thread; the child answers whatever reaches it. */
  const spawnScript: ScriptFn = (request) => {
    const text = lastUserText(request) ?? '';
    // Messages from other sessions (the task, announces) start with a bracketed provenance line.
    const words =
      text
        .split('\n')
        .filter((line) => line.trim() !== '' && !line.startsWith('['))
        .at(-1) ?? '';
    if (request.system.includes('You are a sub-agent')) return `Child here: ${words}`;
    if (request.messages.at(-1)?.role === 'toolResult') return 'I started a researcher in its own thread.';
    if (words.includes('spawn a researcher')) {
      return {
        toolCalls: [
          {
            name: 'sessions_spawn',
            arguments: { task: 'Research the tides', label: 'Tides research', thread: true },
          },
        ],
      };
    }
    return 'Noted.';
  };

  beforeAll(async () => {
    fake = await FakeDiscord.start({
      bots: [{ token: TOKEN, username: 'colloquy' }],
      guilds: [{ name: 'Spawn Guild', channels: ['general'] }],
    });
    harness = await createTestHarness({
      script: spawnScript,
      plugins: [discordPlugin(fake)],
      runtime: {
        tools: ({ session, gateway, config }) =>
          createSessionTools({
            requesterKey: session.key,
            agentId: session.agentId,
            sandboxed: session.sandboxed ?? false,
            config,
            gateway,
          }),
      },
    });
  });

  afterAll(async () => {
    await harness.close();
    await fake.close();
  });

  it('creates a thread for the child, which answers there and hears the humans who write in it', async () => {
    const general = fake.channelId('general');
    const alice = fake.addUser('alice');
    fake.say({
      channelId: general,
      author: alice,
      content: `<@${fake.bots[0]!.user.id}> spawn a researcher`,
    });

    const thread = await fake.waitFor(() => fake.threadsOf(general)[0], 8000, 'the thread');
    expect(thread).toMatchObject({ name: 'Tides research' });
    const binding = await fake.waitFor(() => harness.store.getThreadBinding('discord', 'main', thread.id));
    expect(binding).toMatchObject({
      conversationId: general,
      sessionKey: expect.stringMatching(/^agent:main:subagent:/),
    });
    const childKey = binding!.sessionKey;

    // The parent answers in the channel; the child works on its task (its result is announced to the parent).
    await fake.waitFor(
      () => fake.botMessages(general).find((m) => m.content === 'I started a researcher in its own thread.'),
      8000,
      "the parent's reply",
    );
    await harness.waitForIdle(childKey, 8000);

    // A human in the thread (no mention) reaches the child, and the child answers in the thread.
    fake.say({ channelId: thread.id, author: alice, content: 'what about spring tides?' });
    const second = await fake.waitFor(
      () => fake.botMessages(thread.id).find((m) => m.content === 'Child here: what about spring tides?'),
      8000,
      "the child's second answer",
    );
    expect(second.channel_id).toBe(thread.id);
    const transcript = await harness.transcript(childKey);
    expect(transcript.some((m) => m.role === 'user' && m.content === 'what about spring tides?')).toBe(true);
    expect(fake.threadsOf(general)).toHaveLength(1);
  });
});

describe('thread bindings across a restart (SQLite store)', () => {
  let fake: FakeDiscord;
  let dir: string;

  beforeAll(async () => {
    fake = await FakeDiscord.start({
      bots: [{ token: TOKEN, username: 'colloquy' }],
      guilds: [{ name: 'Restart Guild', channels: ['general'] }],
    });
    dir = mkdtempSync(join(tmpdir(), 'colloquy-discord-'));
  });

  afterAll(async () => {
    await fake.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('keeps routing the thread to its session after the process restarts', async () => {
    const file = join(dir, 'colloquy.db');
    const general = fake.channelId('general');
    const alice = fake.addUser('alice');

    const { harness: first, discord } = await boot(fake, await openSqliteStore({ file }));
    const target = await discord.createThread!({
      parent: { channel: 'discord', to: general, accountId: 'main' },
      title: 'Long-running child',
      sessionKey: CHILD_KEY,
    });
    await first.close();

    const { harness: second } = await boot(fake, await openSqliteStore({ file }));
    try {
      expect((await second.store.getThreadBinding('discord', 'main', target.threadId))?.sessionKey).toBe(
        CHILD_KEY,
      );
      fake.say({ channelId: target.threadId, author: alice, content: 'still there after the restart?' });
      const reply = await fake.waitFor(() => fake.botMessages(target.threadId)[0], 8000, 'the reply');
      expect(reply.content).toBe('You said: still there after the restart?');
      const transcript = await second.transcript(CHILD_KEY);
      expect(transcript[0]).toMatchObject({ role: 'user', content: 'still there after the restart?' });
    } finally {
      await second.close();
    }
  });
});
