import { createWebChatPlugin, type WebChatConfigInput, type WebChatPlugin } from '../../src/index.js';
import { FakeHost, type FakeHostOptions } from './fake-host.js';

export const COOKIE_SECRET = 'test-cookie-secret-0123456789abcdef';
export const ADMIN_TOKEN = 'owner-token-0123456789';

/** A started plugin on a free port with a hand-made host. */
export interface Started {
  plugin: WebChatPlugin;
  host: FakeHost;
  base: string;
  stop(): Promise<void>;
}

/** Starts the web chat on 127.0.0.1 with port 0 and the fake host. */
export async function startWebChat(
  config: WebChatConfigInput = {},
  hostOptions: FakeHostOptions = {},
  host = new FakeHost(hostOptions),
): Promise<Started> {
  const plugin = createWebChatPlugin({
    cookieSecret: COOKIE_SECRET,
    adminToken: ADMIN_TOKEN,
    config: { port: 0, ...config },
  });
  await plugin.start(host.context(plugin));
  return {
    plugin,
    host,
    base: plugin.address(),
    async stop() {
      await host.idle();
      await plugin.stop();
    },
  };
}
