import { type ChannelPlugin, deriveSessionKey } from '@colloquy/core';
import { FakeDiscord, type FakeUser } from '@colloquy/testkit/discord-fake';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createDiscordPlugin } from '../src/index.js';
import { createTestContext, type TestContext } from './helpers/test-context.js';

const TOKEN = 'fake-bot-token';

describe('Discord plugin against the fake Discord', () => {
  let fake: FakeDiscord;
  let plugin: ChannelPlugin;
  let ctx: TestContext;
  let alice: FakeUser;
  let general: string;

  beforeAll(async () => {
    fake = await FakeDiscord.start({
      bots: [{ token: TOKEN, username: 'colloquy' }],
      guilds: [{ name: 'Test Guild', channels: ['general', 'open-chat'], forums: ['help'] }],
    });
    alice = fake.addUser('alice', { globalName: 'Alice' });
    general = fake.channelId('general');
    ctx = createTestContext({ runCommand: async (m) => `ran ${m.text}` });
    plugin = createDiscordPlugin({
      config: {
        accounts: [{ accountId: 'main', token: TOKEN }],
        guilds: {
          [fake.guilds[0]!.id]: { channels: { [fake.channelId('open-chat')]: { requireMention: false } } },
        },
      },
      rest: { api: fake.apiRoot },
    });
    await plugin.start(ctx);
  });

  afterAll(async () => {
    await plugin.stop();
    await fake.close();
  });

  afterEach(() => {
    ctx.received.length = 0;
  });

  const bot = () => fake.bots[0]!;

  it('connects with the intents it needs and reports connected', () => {
    expect(fake.identifies).toHaveLength(1);
    const intents = fake.identifies[0]!.intents;
    for (const bit of [1 << 0, 1 << 9, 1 << 12, 1 << 15]) expect(intents & bit).toBe(bit);
    expect(fake.gatewayQueries[0]!.get('v')).toBe('10');
    expect(fake.gatewayQueries[0]!.get('encoding')).toBe('json');
    // zlib-sync is not installed, so discord.js asks for no transport compression.
    expect(fake.gatewayQueries[0]!.has('compress')).toBe(false);
    expect(plugin.status?.()).toMatchObject({
      state: 'connected',
      accounts: [{ accountId: 'main', state: 'connected' }],
    });
  });

  it('normalises a direct message to a direct chat keyed by the user', async () => {
    const dm = fake.dmChannel(alice);
    const sent = fake.say({ channelId: dm, author: alice, content: 'hello there' });
    const inbound = await fake.waitFor(
      () => ctx.received.find((m) => m.messageId === sent.id),
      5000,
      'the DM',
    );
    expect(inbound).toMatchObject({
      channel: 'discord',
      accountId: 'main',
      chat: { type: 'direct', id: alice.id },
      sender: { id: alice.id, name: 'Alice', username: 'alice', isBot: false },
      text: 'hello there',
      mentionsBot: true,
    });
    expect(inbound.threadId).toBeUndefined();
  });

  it('replies to a DM addressed by user id, referencing the triggering message', async () => {
    const dm = fake.dmChannel(alice);
    const question = fake.say({ channelId: dm, author: alice, content: 'question' });
    await fake.waitFor(() => ctx.received.find((m) => m.messageId === question.id));
    const result = await plugin.send(
      { channel: 'discord', to: alice.id, accountId: 'main' },
      { text: 'answer', replyToMessageId: question.id },
    );
    const stored = fake.botMessages(dm).find((m) => m.id === result.messageId);
    expect(stored?.content).toBe('answer');
    expect(stored?.message_reference?.message_id).toBe(question.id);
    expect(result.messageIds).toEqual([result.messageId]);
  });

  it('passes guild messages without a mention as not addressed, and with a mention as addressed', async () => {
    const plain = fake.say({ channelId: general, author: alice, content: 'just chatting' });
    const mention = fake.say({
      channelId: general,
      author: alice,
      content: `<@${bot().user.id}> what time is it?`,
    });
    await fake.waitFor(() => ctx.received.find((m) => m.messageId === mention.id));
    const first = ctx.received.find((m) => m.messageId === plain.id);
    const second = ctx.received.find((m) => m.messageId === mention.id);
    expect(first).toMatchObject({
      chat: { type: 'channel', id: general, title: 'general' },
      mentionsBot: false,
    });
    expect(second).toMatchObject({
      chat: { type: 'channel', id: general },
      mentionsBot: true,
      text: 'what time is it?',
    });
  });

  it('treats a reply to one of its messages as a mention', async () => {
    const own = await plugin.send(
      { channel: 'discord', to: general, accountId: 'main' },
      { text: 'I am here' },
    );
    const reply = fake.say({ channelId: general, author: alice, content: 'thanks', replyTo: own.messageId });
    const inbound = await fake.waitFor(() => ctx.received.find((m) => m.messageId === reply.id));
    expect(inbound).toMatchObject({ mentionsBot: true, replyToMessageId: own.messageId });
  });

  it('answers without a mention where the channel config says so', async () => {
    const openChat = fake.channelId('open-chat');
    const sent = fake.say({ channelId: openChat, author: alice, content: 'anyone?' });
    const inbound = await fake.waitFor(() => ctx.received.find((m) => m.messageId === sent.id));
    expect(inbound.mentionsBot).toBe(true);
  });

  it('ignores its own messages and those of other bots and webhooks', async () => {
    const otherBot = fake.addUser('otherbot', { bot: true });
    const own = await plugin.send(
      { channel: 'discord', to: general, accountId: 'main' },
      { text: 'echo me' },
    );
    fake.say({ channelId: general, author: otherBot, content: `<@${bot().user.id}> ping` });
    fake.say({
      channelId: general,
      author: alice,
      content: `<@${bot().user.id}> via hook`,
      webhookId: '1234',
    });
    const marker = fake.say({ channelId: general, author: alice, content: 'marker' });
    await fake.waitFor(() => ctx.received.find((m) => m.messageId === marker.id));
    expect(ctx.received.map((m) => m.messageId)).toEqual([marker.id]);
    expect(fake.messagesIn(general).some((m) => m.id === own.messageId)).toBe(true);
  });

  it('hands attachments to the runtime with their metadata', async () => {
    const sent = fake.say({
      channelId: fake.dmChannel(alice),
      author: alice,
      content: 'see attached',
      attachments: [
        {
          filename: 'chart.png',
          size: 2048,
          url: 'https://cdn.example/chart.png',
          proxy_url: 'https://media.example/chart.png',
          content_type: 'image/png',
          description: 'weekly chart',
          width: 10,
          height: 10,
        },
        {
          filename: 'notes.pdf',
          size: 99,
          url: 'https://cdn.example/notes.pdf',
          proxy_url: 'x',
          content_type: 'application/pdf',
        },
      ],
    });
    const inbound = await fake.waitFor(() => ctx.received.find((m) => m.messageId === sent.id));
    expect(inbound.text).toBe('see attached');
    expect(inbound.media).toEqual([
      {
        kind: 'image',
        mimeType: 'image/png',
        fileName: 'chart.png',
        size: 2048,
        ref: 'https://cdn.example/chart.png',
        caption: 'weekly chart',
      },
      {
        kind: 'document',
        mimeType: 'application/pdf',
        fileName: 'notes.pdf',
        size: 99,
        ref: 'https://cdn.example/notes.pdf',
      },
    ]);
  });

  it('splits a 5,000-character reply with a code block into valid chunks', async () => {
    const code = Array.from(
      { length: 60 },
      (_, i) => `    result.push(transform(input[${i}], options)); // step ${i}`,
    );
    const text = `${'Intro paragraph. '.repeat(60)}\n\n\`\`\`ts\nfunction run() {\n${code.join('\n')}\n}\n\`\`\`\n\n${'Closing words. '.repeat(60)}`;
    expect(text.length).toBeGreaterThan(5000);
    const result = await plugin.send({ channel: 'discord', to: general, accountId: 'main' }, { text });
    expect(result.messageIds.length).toBeGreaterThanOrEqual(3);
    const chunks = result.messageIds.map((id) => fake.messagesIn(general).find((m) => m.id === id)!.content);
    for (const chunk of chunks) {
      expect(chunk.length).toBeLessThanOrEqual(2000);
      const fences = chunk.split('\n').filter((line) => /^```/.test(line)).length;
      expect(fences % 2).toBe(0);
    }
    const rejoined = chunks.join('\n').replace(/\n```\n```ts\n/g, '\n');
    expect(rejoined.replace(/\s+/g, '')).toBe(text.replace(/\s+/g, ''));
  });

  it('converts headings and tables to Discord markdown before sending', async () => {
    const text = [
      '#### Results',
      '',
      '| Team | Score |',
      '|------|------:|',
      '| **Red** | 3 |',
      '| Blue | 12 |',
      '',
      '## Next __steps__',
    ].join('\n');
    const result = await plugin.send({ channel: 'discord', to: general, accountId: 'main' }, { text });
    const sent = fake.messagesIn(general).find((m) => m.id === result.messageId)!;
    expect(sent.content).toBe(
      [
        '**Results**',
        '',
        '```',
        'Team | Score',
        '-----+------',
        'Red  |     3',
        'Blue |    12',
        '```',
        '',
        '## Next **steps**',
      ].join('\n'),
    );
  });

  it('sends plain-format text as is', async () => {
    const text = '| a | b |\n|---|---|\n| 1 | 2 |';
    const result = await plugin.send(
      { channel: 'discord', to: general, accountId: 'main' },
      { text, format: 'plain' },
    );
    expect(fake.messagesIn(general).find((m) => m.id === result.messageId)!.content).toBe(text);
  });

  it('waits out a 429 and then delivers', async () => {
    fake.rateLimitNext('POST', /^\/channels\/\d+\/messages$/, 0.3);
    const before = fake.requests.length;
    const result = await plugin.send(
      { channel: 'discord', to: general, accountId: 'main' },
      { text: 'after the limit' },
    );
    const posts = fake.requests
      .slice(before)
      .filter((r) => r.method === 'POST' && r.path.endsWith('/messages'));
    expect(posts.map((r) => r.status)).toEqual([429, 200]);
    expect(posts[1]!.at - posts[0]!.at).toBeGreaterThanOrEqual(300);
    expect(fake.messagesIn(general).find((m) => m.id === result.messageId)?.content).toBe('after the limit');
  });

  it('shows a typing indicator in the target channel', async () => {
    const before = fake.requests.length;
    await plugin.sendTyping?.({ channel: 'discord', to: general, accountId: 'main' });
    expect(fake.requests.slice(before).map((r) => `${r.method} ${r.path}`)).toContain(
      `POST /channels/${general}/typing`,
    );
  });

  it('creates a thread, binds it, routes the thread to it and sends there', async () => {
    const target = await plugin.createThread!({
      parent: { channel: 'discord', to: general, accountId: 'main' },
      title: 'Research: tides',
      sessionKey: 'agent:main:subagent:abc',
    });
    expect(target).toMatchObject({ channel: 'discord', to: general, accountId: 'main' });
    const [thread] = fake.threadsOf(general);
    expect(thread).toMatchObject({ id: target.threadId, name: 'Research: tides' });
    expect(await ctx.bindings.get('main', target.threadId)).toMatchObject({
      conversationId: general,
      sessionKey: 'agent:main:subagent:abc',
    });

    const sent = await plugin.send(target, { text: 'child reporting in' });
    expect(fake.messagesIn(target.threadId).find((m) => m.id === sent.messageId)?.content).toBe(
      'child reporting in',
    );

    const human = fake.say({ channelId: target.threadId, author: alice, content: 'how is it going?' });
    const inbound = await fake.waitFor(() => ctx.received.find((m) => m.messageId === human.id));
    expect(inbound).toMatchObject({
      chat: { type: 'channel', id: general },
      threadId: target.threadId,
      mentionsBot: true,
    });
  });

  describe('forum channels', () => {
    const forumId = () => fake.channelId('help');
    it('routes a message in a forum post to the post’s thread session', async () => {
      const post = fake.forumPost({
        forumId: forumId(),
        author: alice,
        title: 'Build fails',
        content: `<@${bot().user.id}> the build fails on main`,
      });
      const first = await fake.waitFor(() => ctx.received.find((m) => m.messageId === post.message.id));
      expect(first).toMatchObject({
        chat: { type: 'channel', id: forumId(), title: 'help' },
        threadId: post.threadId,
        text: 'the build fails on main',
        mentionsBot: true,
      });
      const followUp = fake.say({ channelId: post.threadId, author: alice, content: 'any idea?' });
      const second = await fake.waitFor(() => ctx.received.find((m) => m.messageId === followUp.id));
      expect(second).toMatchObject({ chat: { id: forumId() }, threadId: post.threadId, mentionsBot: false });
      const key = deriveSessionKey(
        {
          agentId: 'main',
          channel: 'discord',
          accountId: 'main',
          chatType: 'channel',
          peerId: second!.chat.id,
          threadId: second!.threadId!,
          threadKind: 'thread',
        },
        { dmScope: 'per-channel-peer', mainKey: 'main' },
      );
      expect(key).toBe(`agent:main:discord:channel:${forumId()}:thread:${post.threadId}`);
    });

    it('creates a forum post (a thread with a starter message) for createThread on a forum', async () => {
      const target = await plugin.createThread!({
        parent: { channel: 'discord', to: forumId(), accountId: 'main' },
        title: 'Research: tides',
        sessionKey: 'agent:main:subagent:tides',
      });
      expect(target).toMatchObject({ channel: 'discord', to: forumId(), accountId: 'main' });
      const post = fake.threadsOf(forumId()).find((t) => t.id === target.threadId);
      expect(post).toMatchObject({ id: target.threadId, name: 'Research: tides', parent_id: forumId() });
      const create = fake.requests.find(
        (r) => r.method === 'POST' && r.path === `/channels/${forumId()}/threads`,
      );
      expect(create?.status).toBe(201);
      expect(create?.body).toMatchObject({
        name: 'Research: tides',
        message: { content: 'Research: tides' },
      });
      expect(create?.body).not.toHaveProperty('type');
      expect(fake.messagesIn(target.threadId).map((m) => m.content)).toEqual(['Research: tides']);
      expect(await ctx.bindings.get('main', target.threadId)).toMatchObject({
        conversationId: forumId(),
        sessionKey: 'agent:main:subagent:tides',
      });
      // The bound post needs no mention: it is a conversation with its session.
      const human = fake.say({ channelId: target.threadId, author: alice, content: 'how is it going?' });
      const inbound = await fake.waitFor(() => ctx.received.find((m) => m.messageId === human.id));
      expect(inbound).toMatchObject({
        chat: { id: forumId() },
        threadId: target.threadId,
        mentionsBot: true,
      });
    });
  });

  it('registers slash commands per guild and answers them by deferring then editing', async () => {
    const commands = await fake.waitFor(() =>
      fake.registeredCommands.get(`${bot().applicationId}:${fake.guilds[0]!.id}`),
    );
    expect((commands as { name: string }[]).map((c) => c.name)).toEqual(['status', 'sessions', 'subagents']);
    const token = fake.slashCommand({ channelId: general, user: alice, name: 'subagents', args: 'list' });
    const interaction = await fake.waitFor(() => {
      const record = fake.interactions.get(token);
      return record?.original ? record : undefined;
    });
    expect(interaction.callback?.type).toBe(5);
    expect(interaction.callback!.at - interaction.dispatchedAt).toBeLessThan(3000);
    expect(interaction.original?.content).toBe('ran /subagents list');
    expect(ctx.commandsRun.at(-1)).toMatchObject({
      chat: { type: 'channel', id: general },
      sender: { id: alice.id },
    });
  });

  it('resumes after a forced reconnect and replays what it missed', async () => {
    const resumesBefore = fake.resumes.length;
    fake.forceReconnect();
    await fake.waitFor(() => !fake.isConnected(), 5000, 'the client to close for the reconnect');
    const missed = fake.say({
      channelId: fake.dmChannel(alice),
      author: alice,
      content: 'sent during reconnect',
    });
    const inbound = await fake.waitFor(
      () => ctx.received.find((m) => m.messageId === missed.id),
      8000,
      'replay',
    );
    expect(inbound.text).toBe('sent during reconnect');
    expect(fake.resumes.length).toBe(resumesBefore + 1);
    expect(fake.identifies).toHaveLength(1);
    await fake.waitFor(() => plugin.status?.().state === 'connected');
  });

  it('keeps its gateway session across heartbeats: still connected, no new identify, and still receiving', async () => {
    const identifies = fake.identifies.length;
    const acks = fake.heartbeatAcks;
    await fake.waitFor(() => fake.heartbeatAcks >= acks + 2, 8000, 'two more heartbeats');
    expect(plugin.status?.().state).toBe('connected');
    expect(fake.identifies).toHaveLength(identifies);
    const later = fake.say({
      channelId: fake.dmChannel(alice),
      author: alice,
      content: 'after the heartbeats',
    });
    const inbound = await fake.waitFor(
      () => ctx.received.find((m) => m.messageId === later.id),
      5000,
      'the message',
    );
    expect(inbound.text).toBe('after the heartbeats');
  });
});
