import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  type ChannelContext,
  type ChannelPlugin,
  ColloquyError,
  type InboundMessage,
  resolveConfig,
} from '@colloquy/core';
import { approvePairing } from '@colloquy/core/gateway';
import { MemoryStore } from '@colloquy/core/store';
import { createRuntime, type Runtime } from '@colloquy/runtime';
import { createScriptedModel, lastUserText, type ScriptedModel } from '@colloquy/testkit';
import { checkTelegramHtml, FakeTelegram } from '@colloquy/testkit/telegram-fake';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createTelegramPlugin, type TelegramConfigInput } from '../src/index.js';

const TOKEN = '3003:e2e-token';
const BOT = { id: 3003, username: 'e2e_bot' };
const ALICE = { id: 42, is_bot: false, first_name: 'Alice', username: 'alice' };
const DM = { id: 42, type: 'private' as const, first_name: 'Alice' };
const GROUP_ID = -100500;
const GROUP = { id: GROUP_ID, type: 'supergroup' as const, title: 'Team', is_forum: true as const };
const MENTION = '@e2e_bot';

let fake: FakeTelegram;
let stateDir: string;
let runtime: Runtime | undefined;
let store: MemoryStore;
let plugin: ReturnType<typeof createTelegramPlugin>;

beforeEach(async () => {
  fake = await FakeTelegram.start();
  fake.addBot(TOKEN, BOT);
  fake.addChat(42, { type: 'private' });
  fake.addChat(GROUP_ID, { type: 'supergroup', forum: true, title: 'Team' });
  stateDir = await mkdtemp(join(tmpdir(), 'colloquy-tg-e2e-'));
});

afterEach(async () => {
  await runtime?.shutdown({ drainMs: 200 });
  runtime = undefined;
  await fake.close();
  await rm(stateDir, { recursive: true, force: true });
});

/** Boots the real runtime with the scripted model and the Telegram plugin on the fake. */
async function boot(
  script: Parameters<typeof createScriptedModel>[0] = (request) => `echo: ${lastUserText(request)}`,
  telegram: Partial<TelegramConfigInput> = {},
  existing: MemoryStore = new MemoryStore(),
  receive?: (message: InboundMessage, runtimeReceive: ChannelContext['receive']) => Promise<void>,
): Promise<ScriptedModel> {
  const model = createScriptedModel(script);
  store = existing;
  plugin = createTelegramPlugin({
    config: { accounts: [{ token: TOKEN, apiRoot: fake.apiRoot }], dmPolicy: 'open', ...telegram },
    stateDir,
    pollTimeoutSeconds: 1,
    startTimeoutMs: 3000,
    refetchBackoff: { initialDelayMs: 20, maxDelayMs: 200 },
  });
  // `receive` stands between the plugin and the runtime, to make a message fail on its way in.
  const channel: ChannelPlugin = receive
    ? {
        ...plugin,
        start: (ctx) =>
          plugin.start(
            Object.create(ctx, {
              receive: { value: (message: InboundMessage) => receive(message, (m) => ctx.receive(m)) },
            }) as ChannelContext,
          ),
      }
    : plugin;
  runtime = createRuntime({
    config: resolveConfig({ agents: { defaults: { model: 'scripted/test' } } }),
    store,
    plugins: [channel],
    models: (ref) => (ref.startsWith('scripted/') ? { provider: model, modelId: ref.slice(9) } : undefined),
    commandList: [{ name: 'new', description: 'Start a fresh session' }],
    ...(process.env.TG_DEBUG ? { logger: debugLogger } : {}),
  });
  await runtime.start();
  return model;
}

const print = (level: string) => (o: object | string, m?: string) =>
  console.log(level, m ?? '', JSON.stringify(o)?.slice(0, 300));
const debugLogger: import('@colloquy/core').Logger = {
  debug: print('debug'),
  info: print('info'),
  warn: print('warn'),
  error: print('error'),
  child: () => debugLogger,
};

const mention = (text: string) => ({
  text: `${MENTION} ${text}`,
  entities: [{ type: 'mention' as const, offset: 0, length: MENTION.length }],
});

describe('telegram through the runtime (scripted model)', () => {
  it('answers a DM in the same chat', async () => {
    const model = await boot();
    fake.pushMessage(TOKEN, { chat: DM, from: ALICE, text: 'hello there' });
    const reply = await fake.waitFor(() => fake.sentTo(42)[0], 5000, 'the DM reply');
    expect(reply.visibleText).toBe('echo: hello there');
    expect(model.callCount).toBe(1);
    expect(fake.commands(TOKEN)).toEqual([{ command: 'new', description: 'Start a fresh session' }]);
  });

  it('ignores a group message without a mention and answers one with a mention, quoting it', async () => {
    const model = await boot();
    fake.pushMessage(TOKEN, { chat: GROUP, from: ALICE, text: 'talking among humans' });
    const { message } = fake.pushMessage(TOKEN, { chat: GROUP, from: ALICE, ...mention('are you there?') });
    const reply = await fake.waitFor(() => fake.sentTo(GROUP_ID)[0], 5000, 'the group reply');
    expect(reply).toMatchObject({ replyToMessageId: message.message_id });
    expect(reply.visibleText).toBe(`echo: ${MENTION} are you there?`);
    expect(model.callCount).toBe(1);
    expect(fake.sentTo(GROUP_ID)).toHaveLength(1);
  });

  it('answers a forum topic message in the same topic', async () => {
    await boot();
    const topic = fake.addTopic(GROUP_ID, 'Planning');
    fake.pushMessage(TOKEN, {
      chat: GROUP,
      from: ALICE,
      ...mention('plan it'),
      message_thread_id: topic,
      is_topic_message: true,
    });
    const reply = await fake.waitFor(() => fake.sentTo(GROUP_ID)[0], 5000, 'the topic reply');
    expect(reply).toMatchObject({ threadId: topic });
    expect(fake.chatActions.some((a) => a.threadId === topic && a.action === 'typing')).toBe(true);
  });

  it('routes two forums that reuse a topic id each to the session bound to its own topic', async () => {
    const OTHER_ID = -100600;
    const OTHER = { id: OTHER_ID, type: 'supergroup' as const, title: 'Other', is_forum: true as const };
    fake.addChat(OTHER_ID, { type: 'supergroup', forum: true, title: 'Other' });
    await boot();
    const parent = (chat: number) => ({ channel: 'telegram', to: String(chat), accountId: 'default' });
    const a = await plugin.createThread!({
      parent: parent(GROUP_ID),
      title: 'A',
      sessionKey: 'agent:main:subagent:a',
    });
    const b = await plugin.createThread!({
      parent: parent(OTHER_ID),
      title: 'B',
      sessionKey: 'agent:main:subagent:b',
    });
    // Each forum numbers its own topics: both got the same id.
    expect(a.threadId).toBe(b.threadId);
    const topic = Number(a.threadId);
    for (const chat of [GROUP, OTHER]) {
      // No mention: only a binding makes the bot answer in the topic.
      fake.pushMessage(TOKEN, {
        chat,
        from: ALICE,
        text: `in ${chat.title}`,
        message_thread_id: topic,
        is_topic_message: true,
      });
    }
    await fake.waitFor(() => fake.sentTo(GROUP_ID)[0], 5000, 'the reply in the first forum');
    await fake.waitFor(() => fake.sentTo(OTHER_ID)[0], 5000, 'the reply in the second forum');
    expect(fake.sentTo(GROUP_ID)).toMatchObject([{ threadId: topic, visibleText: 'echo: in Team' }]);
    expect(fake.sentTo(OTHER_ID)).toMatchObject([{ threadId: topic, visibleText: 'echo: in Other' }]);
    expect(await store.getSession('agent:main:subagent:a')).toMatchObject({ lastTo: String(GROUP_ID) });
    expect(await store.getSession('agent:main:subagent:b')).toMatchObject({ lastTo: String(OTHER_ID) });
  });

  it('keeps routing a topic bound before bindings were keyed by chat', async () => {
    const topic = fake.addTopic(GROUP_ID, 'Old');
    const earlier = new MemoryStore();
    // As stored by earlier versions: under the bare topic id.
    await earlier.putThreadBinding({
      channel: 'telegram',
      accountId: 'default',
      conversationId: String(GROUP_ID),
      threadId: String(topic),
      sessionKey: 'agent:main:subagent:old',
      createdAt: 1,
      lastActiveAt: 1,
    });
    await boot(undefined, {}, earlier);
    expect(await store.getThreadBinding('telegram', 'default', String(topic))).toBeUndefined();
    expect(await store.getThreadBinding('telegram', 'default', `${GROUP_ID}:${topic}`)).toMatchObject({
      sessionKey: 'agent:main:subagent:old',
    });
    fake.pushMessage(TOKEN, {
      chat: GROUP,
      from: ALICE,
      text: 'still here?',
      message_thread_id: topic,
      is_topic_message: true,
    });
    const reply = await fake.waitFor(() => fake.sentTo(GROUP_ID)[0], 5000, 'the reply in the old topic');
    expect(reply).toMatchObject({ threadId: topic, visibleText: 'echo: still here?' });
    expect(await store.getSession('agent:main:subagent:old')).toMatchObject({ lastTo: String(GROUP_ID) });
  });

  it('delivers a 10,000-character reply as valid chunks of at most 4096 characters', async () => {
    const paragraph = `**Finding** with \`a < b\` & a [source](https://example.com/?q=1&r=2). ${'words '.repeat(50)}`;
    const long = Array.from({ length: 30 }, () => paragraph).join('\n\n');
    expect(long.length).toBeGreaterThanOrEqual(10_000);
    await boot([long]);
    fake.pushMessage(TOKEN, { chat: DM, from: ALICE, text: 'write a lot' });
    const visibleFindings = () =>
      fake
        .sentTo(42)
        .map((c) => c.visibleText)
        .join(' ')
        .match(/Finding/g)?.length ?? 0;
    await fake.waitFor(() => visibleFindings() >= 30 || undefined, 5000, 'every chunk of the reply');
    const chunks = fake.sentTo(42);
    for (const chunk of chunks) {
      expect(chunk.text.length).toBeLessThanOrEqual(4096);
      expect(checkTelegramHtml(chunk.text)).toMatchObject({ ok: true });
    }
    const words = chunks.map((c) => c.visibleText).join(' ');
    expect(words.match(/Finding/g)).toHaveLength(30);
  });

  it('honours retry_after on a 429 and then delivers the reply', async () => {
    await boot();
    fake.failNext('sendMessage', {
      errorCode: 429,
      description: 'Too Many Requests: retry after 1',
      retryAfter: 1,
    });
    fake.pushMessage(TOKEN, { chat: DM, from: ALICE, text: 'busy?' });
    const reply = await fake.waitFor(() => fake.sentTo(42)[0], 6000, 'the reply after 429');
    expect(reply.visibleText).toBe('echo: busy?');
    const attempts = fake.callsOf('sendMessage');
    expect(attempts).toHaveLength(2);
    expect((attempts[1]?.at ?? 0) - (attempts[0]?.at ?? 0)).toBeGreaterThanOrEqual(900);
  });

  it('runs the model once for an update delivered twice', async () => {
    const model = await boot();
    const { updateId, message } = fake.pushMessage(TOKEN, { chat: DM, from: ALICE, text: 'just once' });
    fake.pushUpdate(TOKEN, { update_id: updateId, message });
    fake.pushMessage(TOKEN, { chat: DM, from: ALICE, text: 'and this' });
    // The duplicate came before "and this": a run it started would have been queued, and answered,
    // before the reply to "and this".
    await fake.waitFor(
      () => fake.sentTo(42).some((m) => m.visibleText === 'echo: and this') || undefined,
      5000,
      'the reply to the message after the duplicate',
    );
    expect(model.requests.map((r) => lastUserText(r))).toEqual(['just once', 'and this']);
    expect(fake.sentTo(42)).toHaveLength(2);
  });

  it('stores and answers a DM once after its first receive failed, confirming no offset past it before', async () => {
    let refusals = 0;
    let offsetsUntilStored: number[] = [];
    const model = await boot(undefined, {}, undefined, async (message, runtimeReceive) => {
      if (message.text === 'during the restart' && refusals++ === 0) {
        throw new ColloquyError('STORE_ERROR', 'The database is restarting.');
      }
      await runtimeReceive(message);
      offsetsUntilStored = fake.callsOf('getUpdates').map((call) => Number(call.params.offset ?? 0));
    });
    const { updateId } = fake.pushMessage(TOKEN, { chat: DM, from: ALICE, text: 'during the restart' });
    await fake.waitFor(() => fake.sentTo(42)[0], 5000, 'the reply');
    await fake.waitFor(
      () => fake.confirmedOffset(TOKEN) > updateId || undefined,
      5000,
      'the offset confirmed',
    );
    expect(refusals).toBe(2);
    expect(Math.max(...offsetsUntilStored)).toBeLessThanOrEqual(updateId);
    expect(model.requests.map((r) => lastUserText(r))).toEqual(['during the restart']);
    expect(fake.sentTo(42).map((m) => m.visibleText)).toEqual(['echo: during the restart']);
  });

  it('pairs an unknown DM user before the model ever sees them', async () => {
    const model = await boot(undefined, { dmPolicy: 'pairing' });
    fake.pushMessage(TOKEN, { chat: DM, from: ALICE, text: 'hi, who are you?' });
    const notice = await fake.waitFor(() => fake.sentTo(42)[0], 5000, 'the pairing code');
    const code = /code: ([A-Z0-9]{8})/.exec(notice.visibleText)?.[1] ?? '';
    expect(model.callCount).toBe(0);
    await approvePairing(store, 'telegram', code);
    fake.pushMessage(TOKEN, { chat: DM, from: ALICE, text: 'approved now' });
    const reply = await fake.waitFor(() => fake.sentTo(42)[1], 5000, 'the reply after approval');
    expect(reply.visibleText).toBe('echo: approved now');
    expect(model.callCount).toBe(1);
  });
});
