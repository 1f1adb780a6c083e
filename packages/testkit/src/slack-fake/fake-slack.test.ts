import { App, LogLevel } from '@slack/bolt';
import { afterEach, describe, expect, it } from 'vitest';
import { FakeSlack } from './fake-slack.js';

let fake: FakeSlack | undefined;
let app: App | undefined;
afterEach(async () => {
  await app?.stop();
  await fake?.close();
  app = undefined;
  fake = undefined;
});

function socketApp(slack: FakeSlack): App {
  return new App({
    token: slack.botToken,
    appToken: slack.appToken,
    socketMode: true,
    logLevel: LogLevel.ERROR,
    clientOptions: { slackApiUrl: slack.apiUrl },
  });
}

describe('FakeSlack with a real Bolt app', () => {
  it('connects over Socket Mode, delivers a DM and takes the reply through chat.postMessage', async () => {
    fake = await FakeSlack.start();
    const slack = fake;
    app = socketApp(slack);
    app.message(async ({ message, say }) => {
      if (message.subtype === undefined) await say(`echo: ${message.text}`);
    });
    await app.start();
    expect(slack.openSockets).toBe(1);
    expect(slack.callsOf('auth.test')[0]?.token).toBe(slack.botToken);
    const ada = slack.addUser('ada');
    const sent = await slack.say({ channel: slack.dm(ada), user: ada, text: 'hi' });
    await fake!.waitFor(() => slack.sentByBot.length === 1, 5000, 'the echo');
    expect(slack.sentByBot[0]).toMatchObject({ channel: slack.dm(ada), text: 'echo: hi' });
    expect(slack.acks.size).toBe(1);
    expect(sent.ts).toMatch(/^\d+\.\d{6}$/);
  });

  it('acks a slash command and takes the answer on its response_url', async () => {
    fake = await FakeSlack.start();
    app = socketApp(fake);
    app.command('/status', async ({ command, ack, respond }) => {
      await ack();
      await respond({ text: `status for ${command.user_name}: ${command.text}`, response_type: 'ephemeral' });
    });
    await app.start();
    const ada = fake.addUser('ada');
    const command = await fake.slashCommand({
      channel: fake.channelId('general'),
      user: ada,
      command: '/status',
      text: 'all',
    });
    await fake!.waitFor(() => command.responses.length === 1, 5000, 'the response');
    expect(command.ackedAt).toBeDefined();
    expect(command.responses[0]).toMatchObject({ text: 'status for ada: all' });
  });

  it('answers 429 with Retry-After, which the web client waits out before it retries', async () => {
    fake = await FakeSlack.start();
    app = socketApp(fake);
    await app.start();
    fake.rateLimitNext('chat.postMessage', 1);
    const started = Date.now();
    const result = await app.client.chat.postMessage({ channel: fake.channelId('general'), text: 'late' });
    expect(result.ok).toBe(true);
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
    expect(fake.callsOf('chat.postMessage').map((call) => call.status)).toEqual([429, 200]);
  });

  it('fails the outage’s methods with its status and Retry-After, resets them, and answers again after', async () => {
    fake = await FakeSlack.start();
    const slack = fake;
    const call = (method: string) =>
      fetch(`${slack.apiUrl}${method}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${slack.botToken}`, 'content-type': 'application/json' },
        body: JSON.stringify({ channel: slack.channelId('general'), text: 'hi' }),
      });
    slack.startOutage({ status: 503, retryAfterSeconds: 7, methods: ['chat.postMessage'] });
    const down = await call('chat.postMessage');
    expect([down.status, down.headers.get('retry-after')]).toEqual([503, '7']);
    expect((await call('auth.test')).status).toBe(200);
    slack.startOutage({ reset: true });
    await expect(call('auth.test')).rejects.toThrow();
    slack.endOutage();
    expect((await call('chat.postMessage')).status).toBe(200);
    expect(slack.callsOf('chat.postMessage').map((c) => c.status)).toEqual([503, 200]);
    expect(slack.callsOf('auth.test').map((c) => c.status)).toEqual([200, 0]);
    expect(slack.sentByBot.map((m) => m.text)).toEqual(['hi']);
  });

  // The socket-mode client waits its client ping timeout (5 s) before it reconnects.
  it('reconnects when it asks the app to (a disconnect message), through a new apps.connections.open', {
    timeout: 20_000,
  }, async () => {
    fake = await FakeSlack.start();
    const slack = fake;
    app = socketApp(slack);
    const seen: string[] = [];
    app.message(async ({ message }) => {
      if (message.subtype === undefined) seen.push(message.text ?? '');
    });
    await app.start();
    slack.requestReconnect();
    await fake!.waitFor(
      () => slack.connectionsOpened === 2 && slack.openSockets === 1,
      10_000,
      'the new connection',
    );
    const ada = slack.addUser('ada');
    await slack.say({ channel: slack.dm(ada), user: ada, text: 'after' });
    await fake!.waitFor(() => seen.length === 1, 5000, 'the message on the new connection');
    expect(slack.callsOf('apps.connections.open')).toHaveLength(2);
  });

  it('delivers events as signed HTTP requests that Bolt’s HTTP receiver verifies', async () => {
    fake = await FakeSlack.start();
    const slack = fake;
    const signingSecret = 'fake-signing-secret';
    app = new App({
      token: slack.botToken,
      signingSecret,
      logLevel: LogLevel.ERROR,
      clientOptions: { slackApiUrl: slack.apiUrl },
    });
    app.message(async ({ message, say }) => {
      if (message.subtype === undefined) await say(`got ${message.text}`);
    });
    const server = (await app.start({ port: 0, host: '127.0.0.1' })) as import('node:http').Server;
    const { port } = server.address() as import('node:net').AddressInfo;
    slack.useHttpEvents(`http://127.0.0.1:${port}/slack/events`, signingSecret);
    const ada = slack.addUser('ada');
    await slack.say({ channel: slack.channelId('general'), user: ada, text: 'over http' });
    await fake!.waitFor(() => slack.sentByBot.length === 1, 5000, 'the answer');
    expect(slack.sentByBot[0]?.text).toBe('got over http');

    slack.useHttpEvents(`http://127.0.0.1:${port}/slack/events`, 'another-secret');
    await slack.say({ channel: slack.channelId('general'), user: ada, text: 'forged' });
    expect(slack.sentByBot).toHaveLength(1);
  });

  it('serves a shared file to the bot token only', async () => {
    fake = await FakeSlack.start();
    const file = fake.addFile('notes.txt', 'text/plain', 'hello file');
    const withToken = await fetch(file.url_private, {
      headers: { authorization: `Bearer ${fake.botToken}` },
    });
    expect(await withToken.text()).toBe('hello file');
    const without = await fetch(file.url_private);
    expect(without.status).toBe(404);
  });
});
