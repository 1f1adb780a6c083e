import { FakeDiscord, type FakeUser } from '@colloquy/testkit/discord-fake';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AppProcess, runCliProcess, startApp } from './support/app-process.js';

const TOKEN = 'discord-app-e2e-token';

let fake: FakeDiscord;
let app: AppProcess;
let alice: FakeUser;

beforeAll(async () => {
  // The fake advertises a closed port: only the account's gatewayUrl leads to its gateway, and only
  // its apiRoot to its REST API.
  fake = await FakeDiscord.start({
    bots: [{ token: TOKEN, username: 'colloquy' }],
    guilds: [{ name: 'App Guild', channels: ['general'] }],
    advertisedGatewayUrl: 'ws://127.0.0.1:9/gateway',
  });
  alice = fake.addUser('alice');
  app = await startApp({
    channels: {
      discord: {
        accounts: [{ accountId: 'main', token: TOKEN, apiRoot: fake.apiRoot, gatewayUrl: fake.gatewayUrl }],
      },
    },
    app: { owners: { discord: [alice.id] } },
  });
}, 30_000);

afterAll(async () => {
  await app?.cleanup();
  await fake?.close();
});

describe('the app with Discord behind a proxy, set only in its config (discord.js against a fake Discord)', () => {
  it('connects through the configured REST root and gateway URL', async () => {
    expect(fake.identifies).toHaveLength(1);
    const status = await runCliProcess(['status', '--state-dir', 'state'], { cwd: app.dir });
    expect(status.stdout).toMatch(/discord connected/);
  });

  it('answers a command in a DM through the configured REST root', async () => {
    const dm = fake.dmChannel(alice);
    fake.say({ channelId: dm, author: alice, content: '/status' });
    const reply = await fake.waitFor(
      () => fake.botMessages(dm).find((m) => m.content.includes('Session:')),
      10_000,
      'the /status answer',
    );
    expect(reply.content).toContain('discord');
  });
});
