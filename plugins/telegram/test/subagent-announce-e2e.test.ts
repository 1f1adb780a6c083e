import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { resolveConfig } from '@colloquy/core';
import type { ModelRequest } from '@colloquy/core/model';
import { MemoryStore } from '@colloquy/core/store';
import { createRuntime, type Runtime } from '@colloquy/runtime';
import { createScriptedModel, lastUserText, type ScriptedModel } from '@colloquy/testkit';
import { FakeTelegram, type SentMessage } from '@colloquy/testkit/telegram-fake';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createTelegramPlugin } from '../src/index.js';

const TOKEN = '4004:spawn-token';
const BOT = { id: 4004, username: 'spawn_bot' };
const ALICE = { id: 42, is_bot: false, first_name: 'Alice', username: 'alice' };
const GROUP_ID = -100700;
const GROUP = { id: GROUP_ID, type: 'supergroup' as const, title: 'Team', is_forum: true as const };
const MENTION = '@spawn_bot';
const TASK = 'Find three hotels near the venue';
const CHILD_RESULT = 'Hotel Alpha, Hotel Beta, Hotel Gamma';
const PARENT_ACK = 'A sub-agent is on it.';
const PARENT_AFTER_ANNOUNCE = 'The sub-agent reported back.';

let fake: FakeTelegram;
let stateDir: string;
let store: MemoryStore;
let runtime: Runtime | undefined;

beforeEach(async () => {
  fake = await FakeTelegram.start();
  fake.addBot(TOKEN, BOT);
  fake.addChat(GROUP_ID, { type: 'supergroup', forum: true, title: 'Team' });
  stateDir = await mkdtemp(join(tmpdir(), 'colloquy-tg-spawn-'));
  store = new MemoryStore();
});

afterEach(async () => {
  await runtime?.shutdown({ drainMs: 200 });
  runtime = undefined;
  await fake.close();
  await rm(stateDir, { recursive: true, force: true });
});

const isSubagent = (request: ModelRequest): boolean => request.system.includes('You are a sub-agent');
const isAnnounce = (text: string | undefined): boolean => text?.startsWith('[Announce from session') ?? false;

/**
 * The scripted model of both sessions. The parent calls sessions_spawn with `spawnArgs`, then
 * acknowledges; on the turn that reads the announce it says so. The child answers its task, and
 * echoes any later message.
 */
function script(spawnArgs: Record<string, unknown>) {
  return (request: ModelRequest): string | { toolCalls: { name: string; arguments: unknown }[] } => {
    const last = request.messages.at(-1);
    if (isSubagent(request)) {
      const text = lastUserText(request) ?? '';
      return text.includes(TASK) ? CHILD_RESULT : `child heard: ${text}`;
    }
    if (last?.role === 'toolResult') return PARENT_ACK;
    if (isAnnounce(lastUserText(request))) return PARENT_AFTER_ANNOUNCE;
    return { toolCalls: [{ name: 'sessions_spawn', arguments: spawnArgs }] };
  };
}

/** Boots the real runtime (default session tools) with the scripted model and the plugin on the fake. */
async function boot(spawnArgs: Record<string, unknown>): Promise<ScriptedModel> {
  const model = createScriptedModel(script(spawnArgs));
  const plugin = createTelegramPlugin({
    config: { accounts: [{ token: TOKEN, apiRoot: fake.apiRoot }], dmPolicy: 'open' },
    stateDir,
    pollTimeoutSeconds: 1,
    startTimeoutMs: 3000,
  });
  runtime = createRuntime({
    config: resolveConfig({ agents: { defaults: { model: 'scripted/test' } } }),
    store,
    plugins: [plugin],
    models: (ref) => (ref.startsWith('scripted/') ? { provider: model, modelId: ref.slice(9) } : undefined),
    workspaceDir: join(stateDir, 'workspaces'),
    subagents: { pollMs: 20, retryBaseMs: 20, retryMaxMs: 100 },
  });
  await runtime.start();
  return model;
}

/** Alice mentions the bot in a new forum topic; returns the topic id. */
function askInTopic(): number {
  const topic = fake.addTopic(GROUP_ID, 'Trip planning');
  fake.pushMessage(TOKEN, {
    chat: GROUP,
    from: ALICE,
    text: `${MENTION} please research hotels`,
    entities: [{ type: 'mention', offset: 0, length: MENTION.length }],
    message_thread_id: topic,
    is_topic_message: true,
  });
  return topic;
}

const announcesOf = (childKey: string): SentMessage[] =>
  fake.sentTo(GROUP_ID).filter((m) => m.visibleText.startsWith(`Sub-agent ${childKey}`));

/** The sessions_spawn result the parent's model read. */
function spawnResult(model: ScriptedModel): { status: string; childSessionKey: string; threadId?: string } {
  const request = model.requests.find((r) => !isSubagent(r) && r.messages.at(-1)?.role === 'toolResult');
  const result = request?.messages.at(-1);
  if (result?.role !== 'toolResult') throw new Error('the parent never got a sessions_spawn result');
  return JSON.parse(typeof result.content === 'string' ? result.content : '') as ReturnType<
    typeof spawnResult
  >;
}

/**
 * Waits until the runtime has nothing left to do for these sessions: no announce waiting in the
 * outbox and every run ended. Whatever a raw announce or an extra turn would have sent is then in
 * the fake (the plugin's send resolves on the Bot API's answer, before a delivery or run ends).
 */
async function quiet(...sessionKeys: string[]): Promise<void> {
  await fake.waitFor(
    async () => {
      if ((await store.listOutbox({ statuses: ['pending'] })).length > 0) return false;
      for (const sessionKey of sessionKeys) {
        if (!(await store.listRuns({ sessionKey })).every((run) => run.endedAt)) return false;
      }
      return true;
    },
    5000,
    'the announces delivered and the turns ended',
  );
}

describe('a sub-agent spawned from a forum topic (runtime, scripted model, fake Bot API)', () => {
  it('the parent’s reply on the result is the one message in that topic; its next turn read the announce', async () => {
    const model = await boot({ task: TASK });
    const topic = askInTopic();
    const parentKey = `agent:main:telegram:group:${GROUP_ID}:topic:${topic}`;

    // The parent's turn on the result: it read the announce and its reply is the one message
    // the topic gets about it. The raw block is never posted.
    const after = await fake.waitFor(
      () => fake.sentTo(GROUP_ID).find((m) => m.visibleText === PARENT_AFTER_ANNOUNCE),
      5000,
      'the parent’s reply after the announce',
    );
    const spawned = spawnResult(model);
    expect(spawned).toMatchObject({
      status: 'accepted',
      childSessionKey: expect.stringMatching(/^agent:main:subagent:/),
    });
    expect(after.threadId).toBe(topic);
    await quiet(parentKey, spawned.childSessionKey);

    expect(announcesOf(spawned.childSessionKey)).toHaveLength(0);
    expect(
      fake.callsOf('sendMessage').filter((c) => String(c.params.text).includes('finished')),
    ).toHaveLength(0);
    expect(fake.sentTo(GROUP_ID).map((m) => [m.threadId, m.visibleText])).toEqual([
      [topic, PARENT_ACK],
      [topic, PARENT_AFTER_ANNOUNCE],
    ]);

    // The child ran its task once; the parent's next turn saw the announce as a marked message.
    const childRequests = model.requests.filter(isSubagent);
    expect(childRequests).toHaveLength(1);
    expect(lastUserText(childRequests[0]!)).toContain(TASK);
    const wake = model.requests.find((r) => !isSubagent(r) && isAnnounce(lastUserText(r)));
    expect(lastUserText(wake!)).toContain(`[Announce from session ${spawned.childSessionKey};`);
    expect(lastUserText(wake!)).toContain(CHILD_RESULT);
    const announced = (await store.readTail(parentKey, 100)).filter((m) => m.provenance?.kind === 'announce');
    expect(announced).toHaveLength(1);
    expect(announced[0]?.provenance?.sourceSessionKey).toBe(spawned.childSessionKey);
    expect(await store.listInbox(parentKey)).toEqual([]);
  });

  it('with thread: true, opens a topic for the child, which answers there (first run included), while the parent answers the result in its own topic', async () => {
    const model = await boot({ task: TASK, label: 'Hotels', thread: true });
    const topic = askInTopic();

    // The child's first reply goes into its own topic; the parent's reply on the result goes to
    // the topic it was asked in.
    const firstChildReply = await fake.waitFor(
      () => fake.sentTo(GROUP_ID).find((m) => m.visibleText === CHILD_RESULT),
      5000,
      'the child’s first reply',
    );
    const spawned = spawnResult(model);
    expect(spawned).toMatchObject({ status: 'accepted', mode: 'session', threadId: expect.any(String) });
    const childTopic = Number(spawned.threadId);
    expect(childTopic).not.toBe(topic);
    expect(firstChildReply.threadId).toBe(childTopic);

    // The child's topic was created with createForumTopic in the same chat, named by the label.
    const created = fake.callsOf('createForumTopic');
    expect(created).toHaveLength(1);
    expect(created[0]?.params).toMatchObject({ chat_id: GROUP_ID, name: 'Hotels' });
    expect(fake.topics(GROUP_ID).get(childTopic)).toBe('Hotels');

    // A human message in the child's topic reaches the child, which answers there.
    await fake.waitFor(
      () => fake.sentTo(GROUP_ID).find((m) => m.visibleText === PARENT_AFTER_ANNOUNCE),
      5000,
      'the parent’s reply after the announce',
    );
    fake.pushMessage(TOKEN, {
      chat: GROUP,
      from: ALICE,
      text: 'any with a pool?',
      message_thread_id: childTopic,
      is_topic_message: true,
    });
    const childReply = await fake.waitFor(
      () =>
        fake
          .sentTo(GROUP_ID)
          .find((m) => m.threadId === childTopic && m.visibleText.startsWith('child heard')),
      5000,
      'the child’s reply in its topic',
    );
    expect(childReply.visibleText).toBe('child heard: any with a pool?');
    const childTranscript = await store.readTail(spawned.childSessionKey, 100);
    expect(childTranscript.some((m) => m.role === 'user' && m.content === 'any with a pool?')).toBe(true);
    const parentKey = `agent:main:telegram:group:${GROUP_ID}:topic:${topic}`;
    await quiet(parentKey, spawned.childSessionKey);

    // No raw announce anywhere; each topic got its own conversation.
    expect(
      fake.callsOf('sendMessage').filter((c) => String(c.params.text).includes('finished')),
    ).toHaveLength(0);
    const byTopic = (id: number) =>
      fake
        .sentTo(GROUP_ID)
        .filter((m) => m.threadId === id)
        .map((m) => m.visibleText);
    expect(byTopic(topic)).toEqual([PARENT_ACK, PARENT_AFTER_ANNOUNCE]);
    expect(byTopic(childTopic)).toEqual([CHILD_RESULT, 'child heard: any with a pool?']);
    expect(
      (await store.readTail(parentKey, 100)).filter((m) => m.provenance?.kind === 'announce'),
    ).toHaveLength(1);
  });
});
