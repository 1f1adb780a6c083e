import { type BackoffOptions, type ChannelPlugin, ColloquyError, isColloquyError } from '@colloquy/core';
import { FakeDiscord, type FakeDiscordOptions } from '@colloquy/testkit/discord-fake';
import { afterEach, describe, expect, it } from 'vitest';
import { createDiscordPlugin, type DiscordConfigInput } from '../src/index.js';
import { createTestContext, MemoryBindings, type TestContext } from './helpers/test-context.js';

const TOKEN = 'ops-token';

/** What one test started, stopped in afterEach. */
const running: { plugins: ChannelPlugin[]; fakes: FakeDiscord[] } = { plugins: [], fakes: [] };

afterEach(async () => {
  for (const plugin of running.plugins.splice(0)) await plugin.stop();
  for (const fake of running.fakes.splice(0)) await fake.close();
});

async function startFake(options: Partial<FakeDiscordOptions> = {}): Promise<FakeDiscord> {
  const fake = await FakeDiscord.start({
    bots: [{ token: TOKEN, username: 'colloquy' }],
    guilds: [{ name: 'Ops Guild', channels: ['general', 'staff'] }],
    ...options,
  });
  running.fakes.push(fake);
  return fake;
}

function makePlugin(
  fake: FakeDiscord,
  config: Partial<DiscordConfigInput> = {},
  extra: {
    now?: () => number;
    gatewayUrl?: string;
    commandReplyTimeoutMs?: number;
    receiveBackoff?: BackoffOptions;
  } = {},
): ChannelPlugin {
  const plugin = createDiscordPlugin({
    config: { accounts: [{ accountId: 'main', token: TOKEN }], ...config },
    rest: { api: fake.apiRoot },
    ...extra,
  });
  running.plugins.push(plugin);
  return plugin;
}

async function startPlugin(
  plugin: ChannelPlugin,
  ctx: TestContext = createTestContext(),
): Promise<TestContext> {
  await plugin.start(ctx);
  return ctx;
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected a rejection');
}

describe('connection and status', () => {
  it('rejects a bad token with UNAUTHORIZED and reports logged-out', async () => {
    const fake = await startFake();
    const plugin = createDiscordPlugin({
      config: { accounts: [{ accountId: 'main', token: 'wrong' }] },
      rest: { api: fake.apiRoot },
    });
    const error = await rejection(plugin.start(createTestContext()));
    expect(isColloquyError(error) && error.code).toBe('UNAUTHORIZED');
    expect(String((error as Error).message)).toMatch(/Reset Token/);
    expect(plugin.status?.()).toMatchObject({
      state: 'logged-out',
      detail: 'main: logged-out (invalid token)',
    });
    expect(fake.openSockets).toBe(0);
  });

  it('explains how to enable the Message Content intent when Discord refuses it', async () => {
    const fake = await startFake({ disallowMessageContent: true });
    const error = await rejection(makePlugin(fake).start(createTestContext()));
    expect(isColloquyError(error) && error.code).toBe('CHANNEL_ERROR');
    expect((error as Error).message).toMatch(/Privileged Gateway Intents/);
  });

  it('reconnects and resumes after the network drops, reporting reconnecting meanwhile', async () => {
    const fake = await startFake();
    const plugin = makePlugin(fake);
    const ctx = await startPlugin(plugin);
    const alice = fake.addUser('alice');
    fake.dropConnections();
    await fake.waitFor(() => plugin.status?.().state === 'reconnecting', 5000, 'reconnecting');
    const missed = fake.say({
      channelId: fake.dmChannel(alice),
      author: alice,
      content: 'while you were away',
    });
    await fake.waitFor(
      () => ctx.received.find((m) => m.messageId === missed.id),
      8000,
      'the replayed message',
    );
    await fake.waitFor(() => plugin.status?.().state === 'connected', 5000, 'connected again');
    expect(fake.resumes.length).toBeGreaterThanOrEqual(1);
    expect(fake.identifies).toHaveLength(1);
  });

  it('connects to the gateway URL it is given instead of the one Discord advertises', async () => {
    // The fake advertises a closed port; only the override leads to its gateway.
    const fake = await startFake({ advertisedGatewayUrl: 'ws://127.0.0.1:9/gateway' });
    const plugin = makePlugin(fake, {}, { gatewayUrl: fake.gatewayUrl });
    await startPlugin(plugin);
    expect(fake.identifies).toHaveLength(1);
    expect(plugin.status?.().state).toBe('connected');
  });

  it('reaches Discord through the apiRoot and gatewayUrl of its account config alone', async () => {
    // As `colloquy start` builds it: no code options, only the config section. The fake advertises
    // a closed port, so only the account's gatewayUrl leads to its gateway.
    const fake = await startFake({ advertisedGatewayUrl: 'ws://127.0.0.1:9/gateway' });
    const plugin = createDiscordPlugin({
      config: {
        accounts: [{ accountId: 'main', token: TOKEN, apiRoot: fake.apiRoot, gatewayUrl: fake.gatewayUrl }],
      },
    });
    running.plugins.push(plugin);
    await startPlugin(plugin);
    expect(fake.identifies).toHaveLength(1);
    expect(plugin.status?.()).toMatchObject({ state: 'connected', accounts: [{ accountId: 'main' }] });
    const alice = fake.addUser('alice');
    const sent = await plugin.send({ channel: 'discord', to: alice.id, accountId: 'main' }, { text: 'hi' });
    expect(fake.botMessages(fake.dmChannel(alice)).map((m) => m.id)).toContain(sent.messageId);
  });

  it('runs several bot accounts, each with its own DMs and its own token on sends', async () => {
    const fake = await startFake({
      bots: [
        { token: 'token-a', username: 'bot-a' },
        { token: 'token-b', username: 'bot-b' },
      ],
    });
    const plugin = createDiscordPlugin({
      config: {
        accounts: [
          { accountId: 'a', token: 'token-a' },
          { accountId: 'b', tokenEnv: 'BOT_B_TOKEN' },
        ],
      },
      env: { BOT_B_TOKEN: 'token-b' },
      rest: { api: fake.apiRoot },
    });
    running.plugins.push(plugin);
    const ctx = await startPlugin(plugin);
    const [botA, botB] = fake.bots as [(typeof fake.bots)[0], (typeof fake.bots)[0]];
    const alice = fake.addUser('alice');
    const toB = fake.say({ channelId: fake.dmChannel(alice, botB), author: alice, content: 'hi b' });
    const inbound = await fake.waitFor(() => ctx.received.find((m) => m.messageId === toB.id));
    expect(inbound.accountId).toBe('b');
    const sent = await plugin.send({ channel: 'discord', to: alice.id, accountId: 'b' }, { text: 'from b' });
    expect(fake.botMessages(fake.dmChannel(alice, botB), botB).map((m) => m.id)).toEqual([sent.messageId]);
    expect(fake.botMessages(fake.dmChannel(alice, botA), botA)).toEqual([]);
    expect(plugin.status?.().accounts?.map((a) => a.accountId)).toEqual(['a', 'b']);
  });
});

describe('access control', () => {
  it('drops messages from guilds, channels and users outside the allowlists', async () => {
    const fake = await startFake();
    const alice = fake.addUser('alice');
    const mallory = fake.addUser('mallory');
    const general = fake.channelId('general');
    const staff = fake.channelId('staff');
    const plugin = makePlugin(fake, { allowChannels: [general], allowUsers: [alice.id] });
    const ctx = await startPlugin(plugin);
    const botId = fake.bots[0]!.user.id;
    fake.say({ channelId: staff, author: alice, content: `<@${botId}> in staff` });
    fake.say({ channelId: general, author: mallory, content: `<@${botId}> from mallory` });
    fake.say({ channelId: fake.dmChannel(mallory), author: mallory, content: 'dm from mallory' });
    const ok = fake.say({ channelId: general, author: alice, content: `<@${botId}> from alice` });
    await fake.waitFor(() => ctx.received.find((m) => m.messageId === ok.id));
    expect(ctx.received.map((m) => m.text)).toEqual(['from alice']);
  });

  it('refuses slash commands from users outside the allowlist, visibly only to them', async () => {
    const fake = await startFake();
    const alice = fake.addUser('alice');
    const mallory = fake.addUser('mallory');
    const ctx = createTestContext({ runCommand: async () => 'should not run' });
    await startPlugin(makePlugin(fake, { allowUsers: [alice.id] }), ctx);
    const token = fake.slashCommand({ channelId: fake.channelId('general'), user: mallory, name: 'status' });
    const interaction = await fake.waitFor(() => fake.interactions.get(token)?.callback);
    expect(interaction).toMatchObject({ type: 4, flags: 64 });
    expect(ctx.commandsRun).toEqual([]);
  });
});

describe('outbound', () => {
  it('opens the DM with a user it has not seen since it started', async () => {
    const fake = await startFake();
    const alice = fake.addUser('alice');
    const plugin = makePlugin(fake);
    await startPlugin(plugin);
    const sent = await plugin.send(
      { channel: 'discord', to: alice.id, accountId: 'main' },
      { text: 'hello again' },
    );
    expect(fake.botMessages(fake.dmChannel(alice)).map((m) => m.id)).toEqual([sent.messageId]);
  });

  it('reports a refused send as CHANNEL_ERROR with what to fix', async () => {
    const fake = await startFake();
    const staff = fake.channelId('staff');
    fake.denySend(staff);
    const plugin = makePlugin(fake);
    await startPlugin(plugin);
    const error = await rejection(
      plugin.send({ channel: 'discord', to: staff, accountId: 'main' }, { text: 'hi' }),
    );
    expect(isColloquyError(error) && error.code).toBe('CHANNEL_ERROR');
    expect((error as Error).message).toMatch(/Send Messages/);
    expect(isColloquyError(error) && error.details).toMatchObject({
      status: 403,
      discordCode: 50013,
      sentMessageIds: [],
    });
  });

  it('refuses unknown accounts, blank text and threads in DMs', async () => {
    const fake = await startFake();
    const alice = fake.addUser('alice');
    const plugin = makePlugin(fake);
    const ctx = await startPlugin(plugin);
    const general = fake.channelId('general');
    const unknown = await rejection(
      plugin.send({ channel: 'discord', to: general, accountId: 'nope' }, { text: 'x' }),
    );
    expect(isColloquyError(unknown) && unknown.code).toBe('CHANNEL_ERROR');
    const blank = await rejection(
      plugin.send({ channel: 'discord', to: general, accountId: 'main' }, { text: ' \n ' }),
    );
    expect(isColloquyError(blank) && blank.code).toBe('INVALID_ARGUMENT');
    const dm = fake.say({ channelId: fake.dmChannel(alice), author: alice, content: 'hi' });
    await fake.waitFor(() => ctx.received.find((m) => m.messageId === dm.id));
    const thread = await rejection(
      plugin.createThread!({
        parent: { channel: 'discord', to: fake.dmChannel(alice), accountId: 'main' },
        title: 'x',
        sessionKey: 'agent:main:subagent:x',
      }),
    );
    expect(isColloquyError(thread) && thread.code).toBe('NOT_SUPPORTED');
  });
});

describe('thread bindings', () => {
  it('unbinds a thread idle longer than threadBindings.idleMinutes', async () => {
    const fake = await startFake();
    let now = Date.now();
    const alice = fake.addUser('alice');
    const general = fake.channelId('general');
    const plugin = makePlugin(fake, { threadBindings: { idleMinutes: 60 } }, { now: () => now });
    const ctx = await startPlugin(plugin);
    const target = await plugin.createThread!({
      parent: { channel: 'discord', to: general, accountId: 'main' },
      title: 'Idle child',
      sessionKey: 'agent:main:subagent:idle',
    });
    expect(fake.threadsOf(general)[0]).toMatchObject({ thread_metadata: { auto_archive_duration: 60 } });

    now += 59 * 60_000;
    const early = fake.say({ channelId: target.threadId, author: alice, content: 'still bound?' });
    const first = await fake.waitFor(() => ctx.received.find((m) => m.messageId === early.id));
    expect(first.mentionsBot).toBe(true);
    expect((await ctx.bindings.get('main', target.threadId))?.lastActiveAt).toBe(now);

    now += 61 * 60_000;
    const late = fake.say({ channelId: target.threadId, author: alice, content: 'and now?' });
    const second = await fake.waitFor(() => ctx.received.find((m) => m.messageId === late.id));
    expect(second.mentionsBot).toBe(false);
    expect(await ctx.bindings.get('main', target.threadId)).toBeUndefined();
  });

  it('removes bindings that expired while it was stopped, and keeps live ones', async () => {
    const fake = await startFake();
    const bindings = new MemoryBindings();
    const now = Date.now();
    const base = {
      accountId: 'main',
      conversationId: '1',
      sessionKey: 'agent:main:subagent:s',
      createdAt: 0,
    };
    await bindings.put({ ...base, threadId: '100', lastActiveAt: now - 2 * 86_400_000 });
    await bindings.put({ ...base, threadId: '200', lastActiveAt: now - 60_000 });
    await startPlugin(makePlugin(fake), createTestContext({ bindings }));
    expect((await bindings.list()).map((b) => b.threadId)).toEqual(['200']);
  });
});

/** Sends `/sessions all` to a plugin without a command runner; resolves with its deferred reply. */
async function deferredSessionsCommand(fake: FakeDiscord, ctx: TestContext) {
  await startPlugin(makePlugin(fake, {}, { commandReplyTimeoutMs: 200 }), ctx);
  const token = fake.slashCommand({
    channelId: fake.channelId('general'),
    user: fake.addUser('alice'),
    name: 'sessions',
    args: 'all',
  });
  return fake.waitFor(() => fake.interactions.get(token)?.original);
}

describe('slash commands', () => {
  it('follows up when the answer is longer than one message', async () => {
    const fake = await startFake();
    const long = `${'status line\n'.repeat(300)}end`;
    const ctx = createTestContext({ runCommand: async () => long });
    await startPlugin(makePlugin(fake), ctx);
    const token = fake.slashCommand({
      channelId: fake.channelId('general'),
      user: fake.addUser('alice'),
      name: 'status',
    });
    const record = await fake.waitFor(() => {
      const found = fake.interactions.get(token);
      return found?.original && found.followUps.length > 0 ? found : undefined;
    });
    const parts = [record.original!.content, ...record.followUps.map((m) => m.content)];
    expect(parts.join('\n').replace(/\s+/g, '')).toBe(long.replace(/\s+/g, ''));
    for (const part of parts) expect(part.length).toBeLessThanOrEqual(2000);
  });

  it('deletes the deferred reply when the command may say nothing', async () => {
    const fake = await startFake();
    await startPlugin(makePlugin(fake), createTestContext({ runCommand: async () => '' }));
    const token = fake.slashCommand({
      channelId: fake.channelId('general'),
      user: fake.addUser('alice'),
      name: 'status',
    });
    const record = await fake.waitFor(() =>
      fake.interactions.get(token)?.deleted ? fake.interactions.get(token) : undefined,
    );
    expect(record.original).toBeUndefined();
  });

  it('closes a deferred command with a note when no answer comes in time', async () => {
    const fake = await startFake();
    const ctx = createTestContext();
    const record = await deferredSessionsCommand(fake, ctx);
    expect(record.content).toMatch(/answer follows in the chat/);
    expect(ctx.received.at(-1)).toMatchObject({ text: '/sessions all', mentionsBot: true });
  });

  it('says a command the runtime did not take was not taken, instead of passed on', async () => {
    const fake = await startFake();
    const ctx = createTestContext({
      receive: async () => {
        throw new ColloquyError('ABORTED', 'The runtime is shutting down.');
      },
    });
    const record = await deferredSessionsCommand(fake, ctx);
    expect(record.content).toMatch(/could not take this command/);
    expect(ctx.received).toEqual([]);
  });
});

describe('messages the store could not take', () => {
  it('hands a message to the runtime again until it is stored, keeping its channel in order', async () => {
    const fake = await startFake();
    let refusals = 0;
    const ctx = createTestContext({
      receive: async (message) => {
        // The database restarting: the first message is refused twice, as the store fails.
        if (message.text === 'first' && refusals++ < 2) {
          throw new ColloquyError('STORE_ERROR', 'The connection to PostgreSQL failed.');
        }
      },
    });
    await startPlugin(makePlugin(fake, {}, { receiveBackoff: { initialDelayMs: 20, maxDelayMs: 50 } }), ctx);
    const alice = fake.addUser('alice');
    const dm = fake.dmChannel(alice);
    fake.say({ channelId: dm, author: alice, content: 'first' });
    const second = fake.say({ channelId: dm, author: alice, content: 'second' });
    await fake.waitFor(() => ctx.received.find((m) => m.messageId === second.id));
    expect(refusals).toBe(3);
    expect(ctx.received.map((m) => m.text)).toEqual(['first', 'second']);
  });
});
