import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ColloquyError, type DeliveryContext } from '@colloquy/core';
import { approvePairing } from '@colloquy/core/gateway';
import { FakeTelegram } from '@colloquy/testkit/telegram-fake';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createTelegramPlugin, type TelegramChannelPlugin, type TelegramConfigInput } from '../src/index.js';
import { createTestContext, type TestContext } from './support/test-context.js';

const TOKEN = '1001:test-token';
const BOT = { id: 1001, username: 'colloquy_test_bot' };
const ALICE = { id: 42, is_bot: false, first_name: 'Alice', username: 'alice' };
const DM = { id: 42, type: 'private' as const, first_name: 'Alice' };
const GROUP_ID = -100200;
const GROUP = { id: GROUP_ID, type: 'supergroup' as const, title: 'Team', is_forum: true as const };

let fake: FakeTelegram;
let stateDir: string;
const plugins: TelegramChannelPlugin[] = [];
const servers: Server[] = [];

beforeEach(async () => {
  fake = await FakeTelegram.start();
  fake.addBot(TOKEN, BOT);
  fake.addChat(GROUP_ID, { type: 'supergroup', forum: true, title: 'Team' });
  fake.addChat(42, { type: 'private' });
  stateDir = await mkdtemp(join(tmpdir(), 'colloquy-tg-'));
});

afterEach(async () => {
  await Promise.all(plugins.splice(0).map((p) => p.stop()));
  await Promise.all(servers.splice(0).map((s) => new Promise((resolve) => s.close(resolve))));
  await fake.close();
  await rm(stateDir, { recursive: true, force: true });
});

async function startPlugin(
  config: Partial<TelegramConfigInput> = {},
  context: TestContext = createTestContext({
    commands: [{ name: 'new', description: 'Start a fresh session' }],
  }),
): Promise<{ plugin: TelegramChannelPlugin; t: TestContext }> {
  const plugin = createTelegramPlugin({
    config: {
      accounts: [{ accountId: 'main', token: TOKEN, apiRoot: fake.apiRoot }],
      dmPolicy: 'open',
      ...config,
    },
    stateDir,
    pollTimeoutSeconds: 1,
    startTimeoutMs: 3000,
    refetchBackoff: { initialDelayMs: 20, maxDelayMs: 200 },
    webhookTimeoutMs: 300,
  });
  plugins.push(plugin);
  await plugin.start(context.ctx);
  return { plugin, t: context };
}

const dmTarget: DeliveryContext = { channel: 'telegram', to: '42', accountId: 'main' };
const groupTarget: DeliveryContext = { channel: 'telegram', to: String(GROUP_ID), accountId: 'main' };

describe('telegram plugin against a fake Bot API', () => {
  it('connects, registers commands and reports connected', async () => {
    const { plugin } = await startPlugin();
    expect(fake.callsOf('getMe')).toHaveLength(1);
    expect(fake.commands(TOKEN)).toEqual([{ command: 'new', description: 'Start a fresh session' }]);
    expect(plugin.status?.()).toMatchObject({
      state: 'connected',
      accounts: [{ accountId: 'main', state: 'connected' }],
    });
    expect(plugin.capabilities).toMatchObject({ threads: true, threadKind: 'topic', maxTextLength: 4096 });
  });

  it('receives a DM and sends the reply, returning the Telegram message id', async () => {
    const { plugin, t } = await startPlugin();
    fake.pushMessage(TOKEN, { chat: DM, from: ALICE, text: 'hello bot' });
    const inbound = await t.waitForReceived(1);
    expect(inbound).toMatchObject({
      channel: 'telegram',
      accountId: 'main',
      chat: { type: 'direct', id: '42' },
      sender: { id: '42', username: 'alice' },
      text: 'hello bot',
      mentionsBot: true,
    });
    const result = await plugin.send(dmTarget, { text: '**Hi** <there> & welcome' });
    const sent = fake.sentTo(42);
    expect(sent).toHaveLength(1);
    expect(sent[0]).toMatchObject({ parseMode: 'HTML', visibleText: 'Hi <there> & welcome' });
    expect(result).toEqual({
      messageId: String(sent[0]?.messageId),
      messageIds: [String(sent[0]?.messageId)],
    });
  });

  it('gates group messages on mentions, replies and commands, configurable per group', async () => {
    const { t } = await startPlugin({ groups: { '-100300': { requireMention: false } } });
    fake.pushMessage(TOKEN, { chat: GROUP, from: ALICE, text: 'chatting among ourselves' });
    fake.pushMessage(TOKEN, {
      chat: GROUP,
      from: ALICE,
      text: '@colloquy_test_bot what is up',
      entities: [{ type: 'mention', offset: 0, length: 18 }],
    });
    fake.pushMessage(TOKEN, {
      chat: { id: -100300, type: 'group', title: 'Open' },
      from: ALICE,
      text: 'no mention needed here',
    });
    await t.waitForReceived(3);
    expect(t.received.map((m) => [m.chat.id, m.mentionsBot])).toEqual([
      [String(GROUP_ID), false],
      [String(GROUP_ID), true],
      ['-100300', true],
    ]);
  });

  it('ignores groups outside the list with groupPolicy allowlist', async () => {
    const { t } = await startPlugin({ groupPolicy: 'allowlist', groups: { '-100300': {} } });
    fake.pushMessage(TOKEN, { chat: GROUP, from: ALICE, text: 'not served' });
    fake.pushMessage(TOKEN, {
      chat: { id: -100300, type: 'group', title: 'Served' },
      from: ALICE,
      text: 'served',
    });
    await t.waitForReceived(1);
    expect(t.received.map((m) => m.text)).toEqual(['served']);
  });

  it('keeps the forum topic on inbound messages and on replies', async () => {
    const { plugin, t } = await startPlugin();
    const topic = fake.addTopic(GROUP_ID, 'Planning');
    const { message } = fake.pushMessage(TOKEN, {
      chat: GROUP,
      from: ALICE,
      text: '/new@colloquy_test_bot please',
      entities: [{ type: 'bot_command', offset: 0, length: 22 }],
      message_thread_id: topic,
      is_topic_message: true,
    });
    const inbound = await t.waitForReceived(1);
    expect(inbound).toMatchObject({ threadId: String(topic), mentionsBot: true, text: '/new please' });
    await plugin.send(
      { ...groupTarget, threadId: inbound.threadId },
      { text: 'on it', replyToMessageId: inbound.messageId },
    );
    expect(fake.sentTo(GROUP_ID)).toMatchObject([
      { threadId: topic, replyToMessageId: message.message_id, visibleText: 'on it' },
    ]);
  });

  it('ignores an update delivered twice', async () => {
    const { t } = await startPlugin();
    const { updateId, message } = fake.pushMessage(TOKEN, { chat: DM, from: ALICE, text: 'once' });
    fake.pushUpdate(TOKEN, { update_id: updateId, message });
    fake.pushMessage(TOKEN, { chat: DM, from: ALICE, text: 'twice?' });
    await t.waitForReceived(2);
    await fake.waitFor(
      () => fake.confirmedOffset(TOKEN) > updateId + 1 || undefined,
      4000,
      'offset confirmation',
    );
    expect(t.received.map((m) => m.text)).toEqual(['once', 'twice?']);
  });

  it('splits a 10,000-character reply into valid messages of at most 4096 characters', async () => {
    const { plugin } = await startPlugin();
    const paragraph = `**Step** uses \`x < y\` & [docs](https://example.com/?a=1&b=2). ${'detail '.repeat(40)}`;
    const text = Array.from({ length: 30 }, () => paragraph).join('\n\n');
    expect(text.length).toBeGreaterThanOrEqual(10_000);
    const result = await plugin.send(dmTarget, {
      text: `${text}\n\n\`\`\`ts\n${'const a = 1;\n'.repeat(400)}\`\`\``,
    });
    const sent = fake.sentTo(42);
    expect(sent.length).toBeGreaterThanOrEqual(4);
    expect(result.messageIds).toEqual(sent.map((m) => String(m.messageId)));
    for (const m of sent) expect(m.text.length).toBeLessThanOrEqual(4096);
    expect(sent.at(-1)?.text).toMatch(/^<pre><code class="language-ts">const a = 1;/);
  });

  it('waits out a 429 with retry_after and then delivers', async () => {
    const { plugin } = await startPlugin();
    fake.failNext('sendMessage', {
      errorCode: 429,
      description: 'Too Many Requests: retry after 1',
      retryAfter: 1,
    });
    const started = Date.now();
    const result = await plugin.send(dmTarget, { text: 'after the wait' });
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
    expect(fake.callsOf('sendMessage')).toHaveLength(2);
    expect(result.messageId).toBe(String(fake.sentTo(42)[0]?.messageId));
  });

  it('reports a 400 as CHANNEL_ERROR with the chunks already sent', async () => {
    const { plugin } = await startPlugin();
    await expect(plugin.send({ ...dmTarget, to: '999' }, { text: 'nobody' })).rejects.toMatchObject({
      code: 'CHANNEL_ERROR',
      details: { telegramErrorCode: 400, description: 'Bad Request: chat not found', sentMessageIds: [] },
    });
  });

  it('resends a chunk as plain text when Telegram cannot parse its HTML', async () => {
    const { plugin } = await startPlugin();
    fake.failNext('sendMessage', {
      errorCode: 400,
      description: "Bad Request: can't parse entities: whatever",
    });
    await plugin.send(dmTarget, { text: '**bold** & more' });
    expect(fake.sentTo(42)).toMatchObject([{ text: 'bold & more' }]);
    expect(fake.sentTo(42)[0]?.parseMode).toBeUndefined();
  });

  it('shows typing in the topic and throttles repeats', async () => {
    const { plugin } = await startPlugin();
    const topic = fake.addTopic(GROUP_ID, 'T');
    await plugin.sendTyping?.({ ...groupTarget, threadId: String(topic) });
    await plugin.sendTyping?.({ ...groupTarget, threadId: String(topic) });
    expect(fake.chatActions).toEqual([{ chatId: String(GROUP_ID), action: 'typing', threadId: topic }]);
  });

  it('creates a topic for a session, binds it, and routes the topic to it', async () => {
    const { plugin, t } = await startPlugin();
    const target = await plugin.createThread?.({
      parent: groupTarget,
      title: 'Research task',
      sessionKey: 'agent:main:subagent:abc',
    });
    expect(target).toMatchObject({ channel: 'telegram', to: String(GROUP_ID), accountId: 'main' });
    const threadId = Number(target?.threadId);
    expect(fake.topics(GROUP_ID).get(threadId)).toBe('Research task');
    expect(await t.store.getThreadBinding('telegram', 'main', `${GROUP_ID}:${threadId}`)).toMatchObject({
      conversationId: String(GROUP_ID),
      sessionKey: 'agent:main:subagent:abc',
    });
    fake.pushMessage(TOKEN, {
      chat: GROUP,
      from: ALICE,
      text: 'follow-up without mention',
      message_thread_id: threadId,
      is_topic_message: true,
    });
    expect(await t.waitForReceived(1)).toMatchObject({ threadId: String(threadId), mentionsBot: true });
    await plugin.send(target as DeliveryContext, { text: 'child reply' });
    expect(fake.sentTo(GROUP_ID)).toMatchObject([{ threadId, visibleText: 'child reply' }]);
  });

  it('refuses to create a topic outside a forum with a helpful error', async () => {
    const { plugin } = await startPlugin();
    fake.addChat(-100400, { type: 'group' });
    await expect(
      plugin.createThread?.({
        parent: { ...groupTarget, to: '-100400' },
        title: 'x',
        sessionKey: 'agent:main:subagent:x',
      }),
    ).rejects.toMatchObject({ code: 'CHANNEL_ERROR', message: expect.stringContaining('Enable Topics') });
  });

  it('downloads an attachment through getFile', async () => {
    const { plugin, t } = await startPlugin();
    fake.addFile(TOKEN, 'voice-1', 'voice/file_1.oga', Buffer.from('OggS-voice-bytes'));
    fake.pushMessage(TOKEN, {
      chat: DM,
      from: ALICE,
      voice: { file_id: 'voice-1', file_unique_id: 'v', duration: 2, mime_type: 'audio/ogg', file_size: 16 },
    });
    const inbound = await t.waitForReceived(1);
    expect(inbound.media).toEqual([
      { kind: 'voice', ref: 'voice-1', mimeType: 'audio/ogg', durationSeconds: 2, size: 16 },
    ]);
    const file = await plugin.downloadFile('main', inbound.media?.[0]?.ref ?? '');
    expect(file).toMatchObject({ filePath: 'voice/file_1.oga', size: 16 });
    expect(file.data.toString()).toBe('OggS-voice-bytes');
    await expect(plugin.downloadFile('main', 'voice-1', { maxBytes: 4 })).rejects.toMatchObject({
      code: 'CHANNEL_ERROR',
    });
  });

  it('stops cleanly, confirming the update offset and releasing the token, and is idempotent', async () => {
    const { plugin, t } = await startPlugin();
    const { updateId } = fake.pushMessage(TOKEN, { chat: DM, from: ALICE, text: 'last' });
    await t.waitForReceived(1);
    await Promise.all([plugin.stop(), plugin.stop()]);
    expect(fake.confirmedOffset(TOKEN)).toBe(updateId + 1);
    expect(fake.hasPendingPoll(TOKEN)).toBe(false);
    expect(plugin.status?.().state).toBe('disconnected');
    await plugin.stop();
    const { plugin: next } = await startPlugin();
    expect(next.status?.().state).toBe('connected');
  });
});

describe('updates that were not stored', () => {
  const refused = () => new ColloquyError('STORE_ERROR', 'The database is restarting.');

  it('fetches an update again until it is stored, and confirms no offset past it before', async () => {
    let refusals = 0;
    let offsetsUntilStored: number[] = [];
    const context = createTestContext({
      receive: async (message) => {
        if (message.text === 'flaky' && refusals++ < 2) throw refused();
        offsetsUntilStored = fake.callsOf('getUpdates').map((call) => Number(call.params.offset ?? 0));
      },
    });
    const { t } = await startPlugin({}, context);
    const { updateId } = fake.pushMessage(TOKEN, { chat: DM, from: ALICE, text: 'flaky' });
    await t.waitForReceived(1);
    expect(refusals).toBe(3);
    expect(Math.max(...offsetsUntilStored)).toBeLessThanOrEqual(updateId);
    await fake.waitFor(
      () => fake.confirmedOffset(TOKEN) > updateId || undefined,
      4000,
      'the offset confirmed',
    );
    expect(t.received.map((m) => m.text)).toEqual(['flaky']);
  });

  it('keeps a chat in order: its messages behind one that was not stored wait for it', async () => {
    let refusals = 0;
    const context = createTestContext({
      receive: async (message) => {
        if (message.text === 'first' && refusals++ === 0) throw refused();
      },
    });
    const { t } = await startPlugin({}, context);
    fake.pushMessage(TOKEN, { chat: DM, from: ALICE, text: 'first' });
    const { updateId } = fake.pushMessage(TOKEN, { chat: DM, from: ALICE, text: 'second' });
    await t.waitForReceived(2);
    // The plugin confirms an offset past both only when it is done with them: no more can come.
    await fake.waitFor(
      () => fake.confirmedOffset(TOKEN) > updateId || undefined,
      4000,
      'the offset past both confirmed',
    );
    expect(t.received.map((m) => m.text)).toEqual(['first', 'second']);
  });

  it('does not confirm an update that was not stored when it stops; the next poller gets it', async () => {
    let refusals = 0;
    const context = createTestContext({
      receive: async () => {
        refusals++;
        throw refused();
      },
    });
    const { plugin } = await startPlugin({}, context);
    const { updateId } = fake.pushMessage(TOKEN, { chat: DM, from: ALICE, text: 'kept by Telegram' });
    await fake.waitFor(() => refusals > 0 || undefined, 4000, 'the refusal');
    await plugin.stopReceiving?.();
    await plugin.stop();
    expect(fake.confirmedOffset(TOKEN)).toBeLessThanOrEqual(updateId);
    const { t } = await startPlugin();
    expect((await t.waitForReceived(1)).text).toBe('kept by Telegram');
  });

  it('fetches an update that was not stored again after its polling lease was lost and taken again', async () => {
    // A PostgreSQL restart: the store refuses, and the lease's connection drops with the server.
    let storing = false;
    const context = createTestContext({
      receive: async () => {
        if (!storing) throw refused();
      },
    });
    const leases: AbortController[] = [];
    context.ctx.lease = async () => {
      const lost = new AbortController();
      leases.push(lost);
      return { lost: lost.signal, release: async () => {} };
    };
    const { t } = await startPlugin({}, context);
    const { updateId } = fake.pushMessage(TOKEN, { chat: DM, from: ALICE, text: 'during the restart' });
    await fake.waitFor(
      () => t.logs.some((entry) => entry.msg.includes('not stored')) || undefined,
      4000,
      'the refusal',
    );
    leases[0]!.abort();
    await fake.waitFor(() => leases.length === 2 || undefined, 4000, 'the lease taken again');
    storing = true;
    expect((await t.waitForReceived(1)).text).toBe('during the restart');
    await fake.waitFor(
      () => fake.confirmedOffset(TOKEN) > updateId || undefined,
      4000,
      'the offset past it confirmed once stored',
    );
  });
});

describe('one poller per token', () => {
  it('refuses a second poller for the same token in this process', async () => {
    await startPlugin();
    const second = createTelegramPlugin({
      config: { accounts: [{ accountId: 'again', token: TOKEN, apiRoot: fake.apiRoot }] },
      stateDir,
      pollTimeoutSeconds: 1,
    });
    plugins.push(second);
    await second.start(createTestContext().ctx);
    expect(second.status?.()).toMatchObject({
      state: 'error',
      detail: expect.stringContaining('already uses this bot token'),
    });
    expect(fake.callsOf('getMe')).toHaveLength(1);
  });

  it('stops polling and reports it when another process polls the same token (409)', async () => {
    const { plugin } = await startPlugin();
    await fake.waitFor(() => fake.callsOf('getUpdates').length >= 1 || undefined, 3000, 'first poll');
    const rogue = await fetch(`${fake.apiRoot}/bot${TOKEN}/getUpdates?timeout=0`);
    expect(rogue.status).toBe(200);
    await fake.waitFor(() => plugin.status?.().state === 'error' || undefined, 5000, 'error status');
    expect(plugin.status?.().detail).toMatch(/409 Conflict: another process is receiving updates/);
    const polls = fake.callsOf('getUpdates').length;
    await new Promise((resolve) => setTimeout(resolve, 1200));
    expect(fake.callsOf('getUpdates')).toHaveLength(polls);
  });

  it('does not steal updates from a webhook another deployment set', async () => {
    fake.setWebhook(TOKEN, 'https://elsewhere.example.com/hook');
    const { plugin } = await startPlugin();
    expect(plugin.status?.()).toMatchObject({ state: 'error', detail: expect.stringContaining('webhook') });
    expect(fake.webhook(TOKEN)).toEqual({ url: 'https://elsewhere.example.com/hook' });
    expect(fake.callsOf('getUpdates')).toHaveLength(0);
  });
});

describe('dm policy', () => {
  it('pairs an unknown user: a code, the owner approves, then messages flow', async () => {
    const { t } = await startPlugin({ dmPolicy: 'pairing' });
    fake.pushMessage(TOKEN, { chat: DM, from: ALICE, text: 'let me in' });
    const notice = await fake.waitFor(() => fake.sentTo(42)[0], 4000, 'pairing code');
    const code = /code: ([A-Z0-9]{8})/.exec(notice.visibleText)?.[1];
    expect(code).toBeDefined();
    expect(notice.visibleText).toContain(`colloquy pairing approve telegram ${code}`);
    fake.pushMessage(TOKEN, { chat: DM, from: ALICE, text: 'please?' });
    await fake.waitFor(
      () => (fake.confirmedOffset(TOKEN) > 0 && fake.callsOf('getUpdates').length >= 3) || undefined,
    );
    expect(t.received).toHaveLength(0);
    expect(fake.sentTo(42)).toHaveLength(1);
    expect((await t.ctx.pairing.list()).pending).toMatchObject([{ code, peerId: '42', accountId: 'main' }]);

    await approvePairing(t.store, 'telegram', code ?? '');
    fake.pushMessage(TOKEN, { chat: DM, from: ALICE, text: 'now?' });
    expect(await t.waitForReceived(1)).toMatchObject({ text: 'now?', sender: { id: '42' } });
  });

  it('drops DMs from users outside allowFrom with dmPolicy allowlist', async () => {
    const { t } = await startPlugin({ dmPolicy: 'allowlist', allowFrom: ['@bob'] });
    fake.pushMessage(TOKEN, { chat: DM, from: ALICE, text: 'hi' });
    fake.pushMessage(TOKEN, {
      chat: { id: 43, type: 'private', first_name: 'Bob' },
      from: { id: 43, is_bot: false, first_name: 'Bob', username: 'bob' },
      text: 'hi from bob',
    });
    await t.waitForReceived(1);
    expect(t.received.map((m) => m.text)).toEqual(['hi from bob']);
    expect(fake.sentTo(42)).toHaveLength(0);
  });
});

describe('webhook mode', () => {
  const SECRET = 'webhook-secret-0123456789';

  async function serve(plugin: TelegramChannelPlugin): Promise<string> {
    const server = createServer(plugin.webhookHandler);
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  /** Posts one DM update to the `/tg` webhook of `base`, as Telegram (again, at each call). */
  const delivery = (base: string, updateId: number, text: string) => (): Promise<Response> =>
    fetch(`${base}/tg`, {
      method: 'POST',
      headers: { 'x-telegram-bot-api-secret-token': SECRET },
      body: JSON.stringify({
        update_id: updateId,
        message: { message_id: 1, date: 1, chat: DM, from: ALICE, text },
      }),
    });

  /** The plugin with one webhook account on `/tg`. */
  const startWebhookPlugin = (context: TestContext) =>
    startPlugin(
      {
        accounts: [
          {
            accountId: 'main',
            token: TOKEN,
            apiRoot: fake.apiRoot,
            mode: 'webhook',
            webhook: { path: '/tg', secretToken: SECRET },
          },
        ],
      },
      context,
    );

  it('registers the webhook, checks the secret token and handles each update once', async () => {
    const { plugin, t } = await startPlugin({
      accounts: [
        {
          accountId: 'main',
          token: TOKEN,
          apiRoot: fake.apiRoot,
          mode: 'webhook',
          webhook: {
            path: '/telegram/main',
            secretToken: SECRET,
            url: 'https://bot.example.com/telegram/main',
          },
        },
      ],
    });
    expect(fake.webhook(TOKEN)).toEqual({
      url: 'https://bot.example.com/telegram/main',
      secretToken: SECRET,
    });
    expect(plugin.webhookPaths()).toEqual(['/telegram/main']);
    const base = await serve(plugin);
    const update = {
      update_id: 5,
      message: { message_id: 1, date: 1, chat: DM, from: ALICE, text: 'via webhook' },
    };
    const post = (path: string, secret: string): Promise<Response> =>
      fetch(`${base}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-telegram-bot-api-secret-token': secret },
        body: JSON.stringify(update),
      });
    expect((await post('/telegram/main', 'wrong-secret')).status).toBe(401);
    expect((await post('/elsewhere', SECRET)).status).toBe(404);
    expect((await post('/telegram/main', SECRET)).status).toBe(200);
    expect((await post('/telegram/main', SECRET)).status).toBe(200);
    expect(t.received.map((m) => m.text)).toEqual(['via webhook']);
    expect(fake.callsOf('getUpdates')).toHaveLength(0);
  });

  it('answers 500 when the runtime refuses an update, so Telegram delivers it again', async () => {
    let fail = true;
    const context = createTestContext({
      receive: async () => {
        if (fail) throw new Error('store busy');
      },
    });
    const { plugin, t } = await startWebhookPlugin(context);
    const base = await serve(plugin);
    const post = delivery(base, 9, 'retry me');
    expect((await post()).status).toBe(500);
    fail = false;
    expect((await post()).status).toBe(200);
    expect(t.received.map((m) => m.text)).toEqual(['retry me']);
  });

  it('never answers 200 before the update is stored: a slow one is answered 500, and its redelivery shares its outcome', async () => {
    const attempts: { settle: (error?: Error) => void }[] = [];
    const context = createTestContext({
      receive: () =>
        new Promise<void>((resolve, reject) => {
          attempts.push({ settle: (error) => (error ? reject(error) : resolve()) });
        }),
    });
    const { plugin, t } = await startWebhookPlugin(context);
    const base = await serve(plugin);
    let requests = 0;
    servers.at(-1)?.on('request', () => requests++);
    const post = delivery(base, 11, 'slow store');
    // The store takes longer than the webhook may wait.
    expect((await post()).status).toBe(500);
    // Telegram delivers it again while the first attempt is still being handled; that attempt fails.
    const again = post();
    await vi.waitFor(() => expect(requests).toBe(2), { timeout: 2000 });
    attempts[0]?.settle(new ColloquyError('STORE_ERROR', 'The database is restarting.'));
    expect((await again).status).toBe(500);
    expect(attempts).toHaveLength(1);
    // The next delivery is stored.
    const third = post();
    await vi.waitFor(() => expect(attempts).toHaveLength(2), { timeout: 2000 });
    attempts[1]?.settle();
    expect((await third).status).toBe(200);
    expect(t.received.map((m) => m.text)).toEqual(['slow store']);
  });
});

describe('group replies', () => {
  it('quotes the message that addressed the bot, once', async () => {
    const { plugin, t } = await startPlugin();
    const { message } = fake.pushMessage(TOKEN, {
      chat: GROUP,
      from: ALICE,
      text: '@colloquy_test_bot summarise',
      entities: [{ type: 'mention', offset: 0, length: 18 }],
    });
    await t.waitForReceived(1);
    await plugin.send(groupTarget, { text: 'first' });
    await plugin.send(groupTarget, { text: 'second' });
    expect(fake.sentTo(GROUP_ID).map((m) => m.replyToMessageId)).toEqual([message.message_id, undefined]);
  });
});

describe('connection problems', () => {
  it('reports a token Telegram rejects as an error with what to do', async () => {
    const plugin = createTelegramPlugin({
      config: { accounts: [{ token: '9999:unknown-token', apiRoot: fake.apiRoot }] },
      stateDir,
      pollTimeoutSeconds: 1,
    });
    plugins.push(plugin);
    await plugin.start(createTestContext().ctx);
    expect(plugin.status?.()).toMatchObject({
      state: 'error',
      detail: expect.stringContaining('@BotFather'),
      accounts: [{ accountId: 'default', state: 'error' }],
    });
    expect(fake.callsOf('getUpdates')).toHaveLength(0);
  });

  it('keeps trying an unreachable Bot API in the background and stops promptly', async () => {
    const closed = await FakeTelegram.start();
    const apiRoot = closed.apiRoot;
    await closed.close();
    const plugin = createTelegramPlugin({
      config: { accounts: [{ token: TOKEN, apiRoot }] },
      stateDir,
      pollTimeoutSeconds: 1,
      startTimeoutMs: 300,
    });
    plugins.push(plugin);
    await plugin.start(createTestContext().ctx);
    expect(plugin.status?.()).toMatchObject({ state: 'reconnecting' });
    const started = Date.now();
    await plugin.stop();
    expect(Date.now() - started).toBeLessThan(1000);
    expect(plugin.status?.().state).toBe('disconnected');
  });
});
