import type { ChannelLease, ChannelPlugin } from '@colloquy/core';
import { FakeDiscord } from '@colloquy/testkit/discord-fake';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createDiscordPlugin } from '../src/index.js';
import { createTestContext, type TestContext } from './helpers/test-context.js';

const TOKEN = 'lease-bot-token';

/** A lease the test grants, takes away and watches, as a cluster's database lock would. */
class ScriptedLease {
  readonly requests: string[] = [];
  released = 0;
  private grant?: (lease: ChannelLease) => void;
  private lost?: AbortController;

  acquire = (name: string): Promise<ChannelLease> => {
    this.requests.push(name);
    return new Promise((resolve) => {
      this.grant = resolve;
    });
  };

  /** Grants the pending request. */
  give(): void {
    this.lost = new AbortController();
    const release = async () => {
      this.released += 1;
    };
    this.grant?.({ lost: this.lost.signal, release });
    this.grant = undefined;
  }

  /** Another instance may take the connection over now. */
  takeAway(): void {
    this.lost?.abort();
  }
}

describe('the Discord gateway connection follows the lease', () => {
  let fake: FakeDiscord;
  let plugin: ChannelPlugin;
  let ctx: TestContext;
  let lease: ScriptedLease;

  beforeEach(async () => {
    fake = await FakeDiscord.start({
      bots: [{ token: TOKEN, username: 'colloquy' }],
      guilds: [{ name: 'Lease Guild', channels: ['general'] }],
    });
    lease = new ScriptedLease();
    ctx = createTestContext();
    ctx.lease = lease.acquire;
    plugin = createDiscordPlugin({
      config: { accounts: [{ accountId: 'main', token: TOKEN }] },
      rest: { api: fake.apiRoot },
    });
  });

  afterEach(async () => {
    await plugin.stop();
    await fake.close();
  });

  it('stays in standby without the lease, connects once granted, and lets go when the lease is lost', async () => {
    await plugin.start(ctx);
    expect(lease.requests).toHaveLength(1);
    expect(lease.requests[0]).toMatch(/^discord:[0-9a-f]{16}$/);
    expect(lease.requests[0]).not.toContain(TOKEN);
    expect(plugin.status?.()).toMatchObject({ accounts: [{ accountId: 'main', state: 'standby' }] });
    expect(fake.identifies).toHaveLength(0);

    lease.give();
    await fake.waitFor(() => fake.isConnected() || undefined, 5000, 'the gateway connection');
    await fake.waitFor(
      () => (plugin.status?.().state === 'connected' ? true : undefined),
      5000,
      'the connected status',
    );
    expect(fake.identifies).toHaveLength(1);

    lease.takeAway();
    await fake.waitFor(
      () => (!fake.isConnected() && fake.openSockets === 0 ? true : undefined),
      5000,
      'the connection closed after the lease was lost',
    );
    await fake.waitFor(() => (lease.requests.length === 2 ? true : undefined), 5000, 'a new lease request');
    expect(plugin.status?.()).toMatchObject({ accounts: [{ accountId: 'main', state: 'standby' }] });

    lease.give();
    // discord.js spaces identifies by 5 s (Discord's identify rate limit), so the second connection
    // completes about 5 s after the first one.
    await fake.waitFor(
      () => fake.isConnected() || undefined,
      20_000,
      'the connection after the lease came back',
    );
    expect(fake.identifies).toHaveLength(2);

    await plugin.stop();
    expect(lease.released).toBe(1);
  }, 40_000);
});
