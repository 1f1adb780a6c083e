import type { SessionRecord } from '@colloquy/core';
import { MemoryStore } from '@colloquy/core/store';
import { makeSessionRecord } from '@colloquy/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { type Harness, makeStore, startHarness, waitFor } from './support/harness.js';

const DM = 'agent:main:memory:dm:user-1';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

describe('inbound messages', () => {
  it('creates the session with the chat as its delivery context and answers there', async () => {
    h = await startHarness({ script: ['hi back'] });
    await h.channel.inject({ text: 'hello', sender: { id: 'user-1', name: 'Ada' } });
    await h.channel.waitForSent(1);
    expect(await h.store.getSession(DM)).toMatchObject({
      kind: 'dm',
      agentId: 'main',
      chatType: 'direct',
      channel: 'memory',
      displayName: 'Ada',
      deliveryContext: { channel: 'memory', to: 'user-1', accountId: 'default' },
      lastChannel: 'memory',
      lastTo: 'user-1',
      lastAccountId: 'default',
    });
    const [run] = await h.store.listRuns({ sessionKey: DM });
    expect(run).toMatchObject({ deliver: true, lane: 'main', message: 'hello' });
    expect((await h.store.readTail(DM, 1))[0]?.role).toBe('assistant');
    expect((await h.store.readTail(DM, 2))[0]).toMatchObject({
      role: 'user',
      sender: { id: 'user-1', name: 'Ada' },
    });
  });

  it('runs a message the platform delivers twice once, even after a restart', async () => {
    const { store: first, file, cleanup } = await makeStore('sqlite');
    h = await startHarness({ script: ['once'], store: first });
    const inbound = h.channel.toInbound({ text: 'hello', sender: { id: 'user-1' }, messageId: 'm-7' });
    expect(await h.runtime.receive(inbound)).toMatchObject({ action: 'queued' });
    expect(await h.runtime.receive({ ...inbound })).toMatchObject({ action: 'ignored' });
    await h.channel.waitForSent(1);
    await h.runtime.shutdown({ drainMs: 200 });
    h = await startHarness({ script: ['twice'], store: (await makeStore('sqlite', file)).store });
    expect(await h.runtime.receive({ ...inbound })).toMatchObject({ action: 'ignored' });
    // Another message id, or the same id in another chat, is new.
    expect(await h.runtime.receive({ ...inbound, chat: { type: 'direct', id: 'user-2' } })).toMatchObject({
      action: 'queued',
    });
    expect(await h.store.listRuns()).toHaveLength(2);
    cleanup();
  });

  it('ignores group messages that do not address the bot, recording nothing', async () => {
    h = await startHarness({ script: ['group reply'] });
    const outcome = await h.runtime.receive(
      h.channel.toInbound({ text: 'chatter', chat: { type: 'group', id: 'g1' } }),
    );
    expect(outcome).toMatchObject({ action: 'ignored' });
    expect(await h.store.listSessions()).toEqual([]);
    const asked = await h.channel.inject({
      text: '@colloquy_bot help',
      chat: { type: 'group', id: 'g1', title: 'Team' },
    });
    await h.channel.waitForSent(1);
    expect(h.channel.sent[0]?.message.replyToMessageId).toBe(asked.messageId);
    expect(await h.store.getSession('agent:main:memory:group:g1')).toMatchObject({
      kind: 'group',
      displayName: 'Team',
    });
  });

  it('shows the model the recent un-addressed messages of the group, and only that group', async () => {
    h = await startHarness({ script: ['first', 'second'] });
    const say = (text: string, chatId: string, name: string) =>
      h!.runtime.receive(
        h!.channel.toInbound({ text, chat: { type: 'group', id: chatId }, sender: { id: name, name } }),
      );
    await say('shall we ship on friday?', 'g1', 'Ada');
    await say('only if the tests pass', 'g1', 'Bo');
    await say('a secret of another group', 'g2', 'Cy');
    expect(await h.store.listSessions()).toEqual([]);
    await h.channel.inject({ text: '@colloquy_bot what do you think?', chat: { type: 'group', id: 'g1' } });
    await h.channel.waitForSent(1);
    const messages = h.model.requests[0]!.messages;
    const context = messages.at(-2)!;
    expect(context.role).toBe('user');
    expect(context.content).toBe(
      'Recent messages in this group, not addressed to you (context only):\n' +
        'Ada: shall we ship on friday?\nBo: only if the tests pass',
    );
    expect(messages.at(-1)?.content).toContain('what do you think?');
    expect(JSON.stringify(messages)).not.toContain('another group');
    // The window was used up: the next addressed message carries no context block.
    await h.channel.inject({ text: '@colloquy_bot and now?', chat: { type: 'group', id: 'g1' } });
    await h.channel.waitForSent(2);
    const next = h.model.requests[1]!.messages;
    expect(next.filter((m) => String(m.content).startsWith('Recent messages in this group'))).toHaveLength(1);
    expect(next.at(-2)?.role).toBe('assistant');
  });

  it('keeps no group context when session.groupContext is off', async () => {
    h = await startHarness({ script: ['reply'], config: { session: { groupContext: { enabled: false } } } });
    await h.runtime.receive(h.channel.toInbound({ text: 'chatter', chat: { type: 'group', id: 'g1' } }));
    await h.channel.inject({ text: '@colloquy_bot hi', chat: { type: 'group', id: 'g1' } });
    await h.channel.waitForSent(1);
    expect(JSON.stringify(h.model.requests[0]!.messages)).not.toContain('chatter');
  });

  it('sends messages in a bound thread to the bound session', async () => {
    h = await startHarness({ script: ['from the worker'] });
    const bound = 'agent:main:subagent:worker';
    await h.store.putSession(makeSessionRecord(bound, { kind: 'subagent' }));
    h.channel.context!.threadBindings.put({
      accountId: 'default',
      conversationId: 'g1',
      threadId: 't9',
      sessionKey: bound,
      createdAt: 1,
      lastActiveAt: 1,
    });
    await h.channel.inject({
      text: '@colloquy_bot status?',
      chat: { type: 'group', id: 'g1' },
      threadId: 't9',
    });
    await h.channel.waitForSent(1);
    expect(await h.store.listRuns({ sessionKey: bound })).toHaveLength(1);
    expect((await h.store.getSession(bound))?.deliveryContext).toEqual({
      channel: 'memory',
      to: 'g1',
      accountId: 'default',
      threadId: 't9',
    });
    expect(h.channel.sent[0]?.to.threadId).toBe('t9');
    expect((await h.store.getThreadBinding('memory', 'default', 't9'))!.lastActiveAt).toBeGreaterThan(1);
  });

  it('derives thread keys with the plugin thread kind and the configured dmScope', async () => {
    h = await startHarness({
      script: () => 'ok',
      channel: { capabilities: { threadKind: 'topic' } },
      config: { session: { dmScope: 'per-peer' } },
    });
    const topic = await h.runtime.receive(
      h.channel.toInbound({ text: '@colloquy_bot x', chat: { type: 'group', id: 'g1' }, threadId: '7' }),
    );
    expect(topic).toMatchObject({ sessionKey: 'agent:main:memory:group:g1:topic:7' });
    const dm = await h.runtime.receive(h.channel.toInbound('x'));
    expect(dm).toMatchObject({ sessionKey: 'agent:main:dm:user-1' });
  });

  it('shows the model one line per attachment of the message', async () => {
    h = await startHarness({ script: ['seen'] });
    await h.channel.inject({
      text: 'what is this?',
      media: [{ kind: 'image', fileName: 'cat.jpg', mimeType: 'image/jpeg', size: 1234, ref: 'file-1' }],
    });
    await h.channel.waitForSent(1);
    const asked = h.model.lastRequest?.messages.at(-1);
    expect(asked?.content).toBe('what is this?\n[image: cat.jpg (image/jpeg, 1234 bytes) ref=file-1]');
  });

  it('ignores a thread binding made in another chat with the same thread id', async () => {
    h = await startHarness({ script: () => 'ok', channel: { capabilities: { threadKind: 'topic' } } });
    await h.store.putThreadBinding({
      channel: 'memory',
      accountId: 'default',
      conversationId: 'forum-a',
      threadId: '7',
      sessionKey: 'agent:main:subagent:bound',
      createdAt: 1,
      lastActiveAt: 1,
    });
    const other = await h.runtime.receive(
      h.channel.toInbound({
        text: '@colloquy_bot hi',
        chat: { type: 'group', id: 'forum-b' },
        threadId: '7',
      }),
    );
    expect(other).toMatchObject({ sessionKey: 'agent:main:memory:group:forum-b:topic:7' });
  });

  it('lets the owner set the send policy with /send, and treats it as text from anyone else', async () => {
    h = await startHarness({ script: () => 'model reply', isOwner: (m) => m.sender.id === 'owner' });
    const owner = { id: 'owner', name: 'Owner' };
    const key = 'agent:main:memory:dm:owner';
    expect(await h.runtime.receive(h.channel.toInbound({ text: '/send off', sender: owner }))).toMatchObject({
      action: 'send-policy',
      sendPolicy: 'deny',
    });
    expect((await h.store.getSession(key))?.sendPolicy).toBe('deny');
    expect(h.channel.sent).toEqual([]);
    await h.runtime.receive(h.channel.toInbound({ text: '/send inherit', sender: owner }));
    expect((await h.store.getSession(key))?.sendPolicy).toBeUndefined();
    expect(h.channel.textsTo('owner')).toEqual(['This session follows the configured send policy again.']);
    expect(await h.store.listRuns({ sessionKey: key })).toEqual([]);
    expect(await h.runtime.receive(h.channel.toInbound('/send off'))).toMatchObject({ action: 'queued' });
    expect((await h.store.getSession(DM))?.sendPolicy).toBeUndefined();
  });

  it('answers slash commands from the commands hook without running the model', async () => {
    h = await startHarness({
      script: ['model reply'],
      commands: {
        matches: (inbound) => inbound.text === '/whoami',
        answer: async (_inbound, session) => `You are in ${session.key}`,
      },
    });
    await h.channel.inject('/whoami');
    await h.channel.inject('a real question');
    await h.channel.waitForSent(2);
    expect(h.channel.sent.map((m) => m.text)).toEqual([`You are in ${DM}`, 'model reply']);
    expect(h.model.callCount).toBe(1);
    await waitFor(async () => (await h!.store.listRuns({ sessionKey: DM }))[0]?.status === 'done');
  });

  it('stores nothing for the commands hook when it does not match a message', async () => {
    const writes: string[] = [];
    class WatchedStore extends MemoryStore {
      override putSession(record: SessionRecord): Promise<void> {
        writes.push(record.key);
        return super.putSession(record);
      }
    }
    const answered: string[] = [];
    h = await startHarness({
      script: ['model reply'],
      store: new WatchedStore(),
      commands: {
        matches: (inbound) => inbound.text.startsWith('/'),
        answer: async (inbound, session) => {
          answered.push(inbound.text);
          // The answer sees its session stored, even the first message's.
          return (await h!.store.getSession(session.key)) ? 'stored' : 'missing';
        },
      },
    });
    await h.channel.inject('a real question');
    await h.channel.waitForSent(1);
    expect(writes).toEqual([]);
    expect(answered).toEqual([]);
    await h.channel.inject({ text: '/status', sender: { id: 'user-2' } });
    await h.channel.waitForSent(2);
    expect(answered).toEqual(['/status']);
    expect(h.channel.sent.map((m) => m.text)).toEqual(['model reply', 'stored']);
  });

  it('answers a command the platform delivers twice once, even after a restart', async () => {
    const { store: first, file, cleanup } = await makeStore('sqlite');
    const ran: string[] = [];
    const commands = {
      matches: (inbound: { text: string }) => inbound.text.startsWith('/spawn'),
      answer: async (inbound: { messageId: string }) => {
        ran.push(inbound.messageId);
        return `spawned for ${inbound.messageId}`;
      },
    };
    h = await startHarness({ store: first, commands });
    const inbound = h.channel.toInbound({
      text: '/spawn research',
      sender: { id: 'user-1' },
      messageId: 'c-1',
    });
    expect(await h.runtime.receive(inbound)).toMatchObject({ action: 'command' });
    expect(await h.runtime.receive({ ...inbound })).toMatchObject({ action: 'ignored' });
    await h.channel.waitForSent(1);
    await h.runtime.shutdown({ drainMs: 200 });
    h = await startHarness({ store: (await makeStore('sqlite', file)).store, commands });
    expect(await h.runtime.receive({ ...inbound })).toMatchObject({ action: 'ignored' });
    // The same command text with another message id is a new command.
    expect(await h.runtime.receive({ ...inbound, messageId: 'c-2' })).toMatchObject({ action: 'command' });
    expect(ran).toEqual(['c-1', 'c-2']);
    expect(h.model.callCount).toBe(0);
    cleanup();
  });

  it('runs native slash commands for plugins through ChannelContext.runCommand', async () => {
    h = await startHarness({
      isOwner: (m) => m.sender.id === 'owner',
      commands: { matches: (inbound) => inbound.text === '/ping', answer: async () => 'pong' },
    });
    const run = h.channel.context!.runCommand!;
    expect(await run(h.channel.toInbound('/ping'))).toBe('pong');
    expect(await run(h.channel.toInbound('/nope now'))).toContain('Unknown command /nope');
    const owner = { id: 'owner', name: 'Owner' };
    expect(await run(h.channel.toInbound({ text: '/send on', sender: owner }))).toBe(
      'Sending is on for this session.',
    );
    expect(await run(h.channel.toInbound({ text: '/send off', sender: owner }))).toBe('');
    expect((await h.store.getSession('agent:main:memory:dm:owner'))?.sendPolicy).toBe('deny');
    expect(h.channel.sent).toEqual([]);
    expect(h.model.callCount).toBe(0);
  });
});
