import type { AddressInfo } from 'node:net';
import { createServer } from 'node:net';
import { type ChannelPlugin, deriveSessionKey } from '@colloquy/core';
import { lastUserText, type ScriptFn } from '@colloquy/testkit';
import { createTestHarness, type TestHarness } from '@colloquy/testkit/harness';
import { FakeSlack, type FakeSlackUser } from '@colloquy/testkit/slack-fake';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSlackPlugin } from '../src/index.js';

/** Replies from the model, chosen by what the user wrote. */
const script: ScriptFn = (request) => {
  const text = lastUserText(request) ?? '';
  if (text.includes('format')) return '## Plan\n\n**Bold** and [docs](https://docs.example/a) for <everyone>';
  if (text.includes('write long')) return `${'A sentence that goes on. '.repeat(400).trim()}`;
  return `You said: ${text.split('\n')[0]}`;
};

describe('Slack plugin through the runtime with the scripted model (Socket Mode)', () => {
  let fake: FakeSlack;
  let harness: TestHarness;
  let slack: ChannelPlugin;
  let alice: FakeSlackUser;
  let general: string;
  /** The key of Alice's DM session under the harness's dmScope. */
  const dmKey = () =>
    deriveSessionKey(
      { agentId: 'main', channel: 'slack', accountId: 'default', chatType: 'direct', peerId: alice.id },
      { dmScope: harness.config.session.dmScope },
    );
  /** Waits for the bot's message number `index` in a conversation (a thread when `threadTs` is given). */
  const botMessage = (channel: string, index: number, threadTs?: string) =>
    fake.waitFor(
      () => fake.botMessages(channel, threadTs)[index],
      8000,
      `bot message ${index} in ${channel}`,
    );

  beforeAll(async () => {
    fake = await FakeSlack.start();
    alice = fake.addUser('alice');
    general = fake.channelId('general');
    slack = createSlackPlugin({
      config: { accounts: [{ botToken: fake.botToken, appToken: fake.appToken }] },
      apiUrl: fake.apiUrl,
    });
    harness = await createTestHarness({
      script,
      plugins: [slack],
      runtime: {
        commandList: [{ name: 'status', description: 'Show the status of this conversation' }],
        commands: {
          matches: (inbound) => inbound.text.startsWith('/status'),
          answer: async () => 'Status: idle, 0 runs <queued>.',
        },
      },
    });
  });

  afterAll(async () => {
    await harness.close();
    await fake.close();
  });

  it('answers a DM in the DM and does not answer its own message', async () => {
    const dm = fake.dm(alice);
    const calls = harness.model.callCount;
    await fake.say({ channel: dm, user: alice, text: 'hello there' });
    expect((await botMessage(dm, 0)).text).toBe('You said: hello there');
    await fake.say({ channel: dm, user: alice, text: 'and then?' });
    expect((await botMessage(dm, 1)).text).toBe('You said: and then?');
    expect(harness.model.callCount).toBe(calls + 2);
    expect(await harness.store.getSession(dmKey())).toMatchObject({
      deliveryContext: { channel: 'slack', to: alice.id, accountId: 'default' },
    });
  });

  it('answers a channel message only when it mentions the bot, without the mention in the text', async () => {
    const calls = harness.model.callCount;
    const before = fake.botMessages(general).length;
    await fake.say({ channel: general, user: alice, text: 'talking among ourselves' });
    await fake.say({ channel: general, user: alice, text: `<@${fake.botUser.id}> what is 2 &lt; 3?` });
    expect((await botMessage(general, before)).text).toBe('You said: what is 2 &lt; 3?');
    expect(harness.model.callCount).toBe(calls + 1);
  });

  it('renders the model’s markdown as mrkdwn', async () => {
    const dm = fake.dm(alice);
    const before = fake.botMessages(dm).length;
    await fake.say({ channel: dm, user: alice, text: 'format please' });
    expect((await botMessage(dm, before)).text).toBe(
      '*Plan*\n\n*Bold* and <https://docs.example/a|docs> for &lt;everyone&gt;',
    );
  });

  it('answers a thread reply that mentions the bot in that thread', async () => {
    const root = await fake.say({ channel: general, user: alice, text: 'a thread starts here' });
    await fake.say({
      channel: general,
      user: alice,
      text: `<@${fake.botUser.id}> in the thread`,
      threadTs: root.ts,
    });
    expect((await botMessage(general, 0, root.ts)).text).toBe('You said: in the thread');
    expect(
      await harness.store.getSession(`agent:main:slack:channel:${general}:thread:${root.ts}`),
    ).toBeDefined();
  });

  it('waits out a 429 with Retry-After and still delivers every chunk of a long reply', async () => {
    const dm = fake.dm(alice);
    const before = fake.botMessages(dm).length;
    fake.rateLimitNext('chat.postMessage', 1);
    await fake.say({ channel: dm, user: alice, text: 'write long' });
    const second = await botMessage(dm, before + 1);
    const calls = fake.callsOf('chat.postMessage');
    const limited = calls.findIndex((call) => call.status === 429);
    expect(limited).toBeGreaterThanOrEqual(0);
    expect(calls[limited + 1]!.at - calls[limited]!.at).toBeGreaterThanOrEqual(900);
    for (const message of fake.botMessages(dm).slice(before))
      expect(message.text.length).toBeLessThanOrEqual(4000);
    expect(second.text.endsWith('goes on.')).toBe(true);
  });

  it('acks a slash command at once and answers it on its response_url, escaped', async () => {
    const command = await fake.slashCommand({ channel: general, user: alice, command: '/status' });
    await fake.waitFor(() => command.responses[0], 5000, 'the command answer');
    expect(command.ackedAt).toBeDefined();
    expect(command.responses[0]).toEqual({
      response_type: 'ephemeral',
      text: 'Status: idle, 0 runs &lt;queued&gt;.',
    });
  });

  it('hands files to the runtime as media with their private URL', async () => {
    const dm = fake.dm(alice);
    const before = fake.botMessages(dm).length;
    const file = fake.addFile('report.pdf', 'application/pdf', 'pdf bytes');
    await fake.say({ channel: dm, user: alice, text: 'see attached', files: [file] });
    await botMessage(dm, before);
    const shown = JSON.stringify(harness.model.lastRequest?.messages.at(-1));
    expect(shown).toContain('see attached');
    expect(shown).toContain('report.pdf');
  });

  it('reports connected, and reconnects when Slack asks it to', { timeout: 20_000 }, async () => {
    expect(slack.status?.().state).toBe('connected');
    fake.requestReconnect();
    await fake.waitFor(() => fake.connectionsOpened === 2 && fake.openSockets === 1, 12_000, 'the reconnect');
    const dm = fake.dm(alice);
    const before = fake.botMessages(dm).length;
    await fake.say({ channel: dm, user: alice, text: 'still there?' });
    expect((await botMessage(dm, before)).text).toBe('You said: still there?');
  });
});

/**
 * A loopback port the system just handed out and took back. A random port in 20,000-40,000 could be
 * one in use (it overlaps the ephemeral range), and the plugin failed with EADDRINUSE in CI.
 */
async function unusedPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

describe('Slack plugin with HTTP events', () => {
  it('serves signed events on its own port and refuses forged ones', async () => {
    const fake = await FakeSlack.start();
    const signingSecret = 'e2e-signing-secret';
    const port = await unusedPort();
    const slack = createSlackPlugin({
      config: {
        mode: 'http',
        http: { port },
        accounts: [{ botToken: fake.botToken, signingSecret }],
      },
      apiUrl: fake.apiUrl,
    });
    const harness = await createTestHarness({ script, plugins: [slack] });
    try {
      const alice = fake.addUser('alice');
      const dm = fake.dm(alice);
      fake.useHttpEvents(`http://127.0.0.1:${port}/slack/events`, signingSecret);
      await fake.say({ channel: dm, user: alice, text: 'over http' });
      expect((await fake.waitFor(() => fake.botMessages(dm)[0], 8000, 'the answer')).text).toBe(
        'You said: over http',
      );
      fake.useHttpEvents(`http://127.0.0.1:${port}/slack/events`, 'not-the-secret');
      await fake.say({ channel: dm, user: alice, text: 'forged' });
      fake.useHttpEvents(`http://127.0.0.1:${port}/slack/events`, signingSecret);
      await fake.say({ channel: dm, user: alice, text: 'genuine again' });
      await fake.waitFor(() => fake.botMessages(dm)[1], 8000, 'the second answer');
      expect(fake.botMessages(dm).map((m) => m.text)).toEqual([
        'You said: over http',
        'You said: genuine again',
      ]);
      expect(fake.openSockets).toBe(0);
    } finally {
      await harness.close();
      await fake.close();
    }
  });
});
