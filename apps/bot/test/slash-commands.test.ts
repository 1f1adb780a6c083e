import { join } from 'node:path';
import type { ModelRequest } from '@colloquy/core/model';
import { openSqliteStore } from '@colloquy/store-sqlite';
import { afterEach, describe, expect, it } from 'vitest';
import { type BotFixture, eventually, startBotFixture } from './support/bot-fixture.js';

const DM = (user: string) => `agent:main:telegram:dm:${user}`;

let fixture: BotFixture | undefined;
afterEach(async () => {
  await fixture?.close();
  fixture = undefined;
});

/** The scripted agent: echoes, skips the reply-back and announce steps of sessions_send. */
function agent(request: ModelRequest): string {
  const last = request.messages.at(-1);
  const text = typeof last?.content === 'string' ? last.content : JSON.stringify(last?.content ?? '');
  if (text.includes('Write a short announcement')) return 'ANNOUNCE_SKIP';
  if (request.system.includes('reply-back exchange')) return 'REPLY_SKIP';
  return `echo: ${text.replace(/^\[Message from session [^\]]*\]\n/, '')}`;
}

describe('slash commands in a channel', () => {
  it('/help lists every command and is answered without running the model', async () => {
    fixture = await startBotFixture({ script: agent });
    const [reply] = await fixture.say('/help');
    for (const name of [
      '/help',
      '/status',
      '/sessions',
      '/history',
      '/search',
      '/send',
      '/spawn',
      '/subagents',
      '/tree',
      '/new',
    ]) {
      expect(reply).toContain(name);
    }
    expect(fixture.model.requests).toHaveLength(0);
    expect(fixture.channel.sent.at(-1)?.message.format).toBe('plain');
  });

  it('/status shows the session, its model and send policy, and who is asking', async () => {
    fixture = await startBotFixture({ script: agent });
    const [reply] = await fixture.say('/status');
    expect(reply).toContain(`Session: ${DM('user-1')} (telegram, idle)`);
    expect(reply).toContain('Model: scripted/test');
    expect(reply).toContain('Sending: on');
    expect(reply).toContain('You: telegram user user-1');
    expect(reply).toContain('Channels: telegram connected');
  });

  it('/sessions and /history show what the session tools show, with tree visibility', async () => {
    fixture = await startBotFixture({ script: agent });
    expect(await fixture.say('hello there')).toEqual(['echo: hello there']);
    await fixture.say('secret plans', 'user-2');
    const [list] = await fixture.say('/sessions');
    expect(list).toContain(DM('user-1'));
    expect(list).not.toContain(DM('user-2'));
    expect(list).toMatch(/1 hidden/);
    const [history] = await fixture.say(`/history ${DM('user-1')} 5`);
    expect(history).toContain('user: hello there');
    expect(history).toContain('assistant: echo: hello there');
    const [other] = await fixture.say(`/history ${DM('user-2')}`);
    expect(other).toMatch(/^Not allowed: /);
    expect(other).not.toContain('secret plans');
    expect(await fixture.say('/history')).toEqual(['Usage: /history <key> [n]']);
  });

  it('/search finds words in the conversations the session tools let it see, and no others', async () => {
    fixture = await startBotFixture({ script: agent });
    await fixture.say('the walrus sings at dawn');
    await fixture.say('walrus secret plans', 'user-2');
    const [found] = await fixture.say('/search Walrus');
    expect(found).toMatch(/^2 matches:/);
    expect(found).toContain(`• ${DM('user-1')} #0 · user`);
    expect(found).toContain('the walrus sings at dawn');
    expect(found).not.toContain('secret plans');
    expect(found).toMatch(/2 hidden: tools\.sessions\.visibility/);
    expect(await fixture.say('/search')).toEqual(['Usage: /search <words>']);
    const [noWords] = await fixture.say('/search ***');
    expect(noWords).toMatch(/^Could not do that: The query has no words/);
    expect(fixture.model.requests.every((r) => !JSON.stringify(r.messages).includes('/search'))).toBe(true);
  });

  it('/send delivers to another visible session and posts its reply back', async () => {
    fixture = await startBotFixture({
      script: agent,
      config: { tools: { sessions: { visibility: 'agent' } } },
    });
    await fixture.say('hi', 'user-2');
    const [ack] = await fixture.say(`/send ${DM('user-2')} how are you?`);
    expect(ack).toMatch(/^Sent to agent:main:telegram:dm:user-2 \(run /);
    const reply = await eventually(() =>
      fixture!.channel.textsTo('user-1').find((t) => t.startsWith('Reply from')),
    );
    expect(reply).toBe('Reply from agent:main:telegram:dm:user-2:\necho: how are you?');
    const { messages } = await fixture.bot.runtime.gateway.call('chat.history', {
      key: DM('user-2'),
      limit: 10,
    });
    const received = messages.find((m) => m.provenance?.kind === 'inter_session');
    expect(received?.provenance?.sourceSessionKey).toBe(DM('user-1'));
  });

  it('/send is refused where the session tools refuse it', async () => {
    fixture = await startBotFixture({ script: agent });
    await fixture.say('hi', 'user-2');
    const [reply] = await fixture.say(`/send ${DM('user-2')} psst`);
    expect(reply).toMatch(/^Not allowed: /);
    expect(fixture.channel.textsTo('user-2')).toEqual(['echo: hi']);
  });

  it('/send on|off|inherit works for the owner only', async () => {
    fixture = await startBotFixture({ script: agent, config: { app: { owners: { telegram: ['boss'] } } } });
    expect(await fixture.say('/send off')).toEqual([
      'Only the owner can turn sending on or off for this chat.',
    ]);
    expect(await fixture.say('/send off', 'boss')).toEqual([]); // the confirmation itself is denied
    expect(await fixture.say('anyone there?', 'boss')).toEqual([]);
    const [status] = await fixture.say('/send on', 'boss');
    expect(status).toBe('Sending is on for this session.');
    expect(await fixture.say('/status', 'boss')).toEqual([expect.stringContaining('(owner)')]);
  });

  it('/new archives the conversation and starts a fresh one in the same chat', async () => {
    fixture = await startBotFixture({ script: agent });
    await fixture.say('remember the blue door');
    const { session: before } = await fixture.bot.runtime.gateway.call('sessions.resolve', {
      key: DM('user-1'),
    });
    const [reply] = await fixture.say('/new');
    expect(reply).toMatch(/^Started a fresh conversation\. The previous one \(2 messages\) is archived as /);
    const gateway = fixture.bot.runtime.gateway;
    const { session: after } = await gateway.call('sessions.resolve', { key: DM('user-1') });
    expect(after.sessionId).not.toBe(before.sessionId);
    expect(after.deliveryContext).toEqual(before.deliveryContext);
    expect((await gateway.call('chat.history', { key: DM('user-1') })).messages).toEqual([]);
    const archived = (await gateway.call('sessions.list', { includeArchived: true })).sessions.find(
      (s) => s.meta?.archivedFrom === DM('user-1'),
    );
    expect(archived?.archivedAt).toBeDefined();
    const old = await gateway.call('chat.history', { key: archived!.key });
    expect(old.messages.map((m) => m.content)).toEqual([
      'remember the blue door',
      'echo: remember the blue door',
    ]);
    expect(await fixture.say('/new')).toEqual(['This conversation is already fresh.']);
    expect(await fixture.say('and now?')).toEqual(['echo: and now?']);
    expect(fixture.model.lastRequest?.messages).toHaveLength(1);
  });

  it('answers native command UIs through runCommand without posting to the chat', async () => {
    fixture = await startBotFixture({ script: agent });
    const ctx = fixture.channel.context!;
    const before = fixture.channel.sent.length;
    const answer = await ctx.runCommand!(fixture.channel.toInbound({ text: '/status' }));
    expect(answer).toContain('Sending: on');
    expect(fixture.channel.sent.length).toBe(before);
    expect(await ctx.runCommand!(fixture.channel.toInbound({ text: '/nope' }))).toBe(
      'Unknown command "/nope". Try /help.',
    );
  });
});

describe('without a model', () => {
  it('answers chat messages with how to configure one, and still runs commands', async () => {
    fixture = await startBotFixture({ noModel: true });
    const [reply] = await fixture.say('hello?');
    expect(reply).toContain('no model is configured');
    expect(reply).toContain('COLLOQUY_MODEL=');
    const runs = await fixture.bot.runtime.gateway.call('sessions.list', {});
    expect(runs.sessions[0]?.status ?? 'idle').toBe('idle');
    expect(fixture.model.requests).toHaveLength(0);
    expect((await fixture.say('/help'))[0]).toContain('/sessions');
  });
});

describe('sub-agents from the chat', () => {
  it('/spawn starts a sub-agent whose result reaches the chat once, in the parent’s words; /subagents lists it', async () => {
    fixture = await startBotFixture({
      script: (request) => {
        if (request.system.toLowerCase().includes('sub-agent')) return 'The moon is 384,400 km away.';
        const reply = agent(request);
        return reply.includes('384,400') ? 'My helper found it: the moon is 384,400 km away.' : reply;
      },
    });
    const [started] = await fixture.say('/spawn find the distance to the moon');
    expect(started).toMatch(/^Started a sub-agent: agent:main:subagent:[0-9a-f-]+ \(run /);
    const childKey = /agent:main:subagent:[0-9a-f-]+/.exec(started!)![0];
    const announce = await eventually(
      () => fixture!.channel.textsTo('user-1').find((t) => t.includes('384,400 km')),
      10_000,
    );
    expect(announce).toBe('My helper found it: the moon is 384,400 km away.');
    // The raw completion block (Status, Result, Stats) never reaches the chat.
    expect(fixture.channel.textsTo('user-1').some((t) => t.includes('Status: ok'))).toBe(false);
    const [list] = await fixture.say('/subagents');
    expect(list).toContain('1 sub-agent, 0 active:');
    expect(list).toContain(`#1 find the distance to the moon · done · `);
    expect(list).toContain(childKey);
    // Nothing left to deliver (no announce pending, every run ended): a second copy would be out.
    const file = join(fixture.stateDir, 'colloquy.db');
    await eventually(async () => {
      const probe = openSqliteStore({ file });
      try {
        const pending = await probe.listOutbox({ statuses: ['pending'] });
        const active = await probe.listRuns({ statuses: ['queued', 'running'] });
        return (pending.length === 0 && active.length === 0) || undefined;
      } finally {
        await probe.close();
      }
    }, 10_000);
    expect(fixture.channel.textsTo('user-1').filter((t) => t.includes('384,400 km'))).toHaveLength(1);
    const [tree] = await fixture.say('/tree');
    expect(tree).toMatch(/^1 sub-agent, 0 active:\n└─ find the distance to the moon · done · \d+(ms|\.\ds)/);
    // The same visibility as the subagents tool: another user's chat sees none of them.
    expect(await fixture.say('/tree', 'user-2')).toEqual([
      'No sub-agents yet. Start one with /spawn <task>.',
    ]);
    expect(await fixture.say('/subagents kill')).toEqual([
      'Usage: /subagents [list | steer <target> <message> | kill <target>]',
    ]);
  });

  it('/tree fits its tree in one message of the platform, counting the sub-agents left out', async () => {
    const limit = 160;
    fixture = await startBotFixture({
      capabilities: { maxTextLength: limit },
      script: (request) => {
        if (request.system.toLowerCase().includes('sub-agent')) return 'Done.';
        return agent(request);
      },
    });
    for (const n of [1, 2, 3, 4, 5, 6]) {
      const [started] = await fixture.say(`/spawn look up fact number ${n} in the library`);
      expect(started).toMatch(/^Started a sub-agent/);
    }
    const replies = await fixture.say('/tree');
    expect(replies, 'one message, not chunks').toHaveLength(1);
    const lines = replies[0]!.split('\n');
    expect(replies[0]!.length).toBeLessThanOrEqual(limit);
    expect(lines[0]).toMatch(/^6 sub-agents, \d active:$/);
    expect(lines[1]).toMatch(/^├─ look up fact number 1 in the library · /);
    const left = /^\((\d) more not shown\)$/.exec(lines.at(-1)!);
    expect(Number(left?.[1]) + lines.length - 2).toBe(6);
  });
});
