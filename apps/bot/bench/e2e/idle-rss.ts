import { FakeDiscord } from '@colloquy/testkit/discord-fake';
import { FakeTelegram } from '@colloquy/testkit/telegram-fake';
import { startBenchApp } from './app-child.js';
import { modelEnv, startEchoModel } from './model-fake.js';
import { memoryMb } from './proc-stats.js';
import { startSilentWhatsApp } from './whatsapp-fake.js';

/** When RSS is read after every channel connected: just after start-up, and once settled. */
const EARLY_MS = 3000;
const SETTLED_MS = 30_000;
const TELEGRAM_TOKEN = '6006:bench-idle-token';
const DISCORD_TOKEN = 'bench-idle-discord-token';

/**
 * RSS of the app idle with all four channels on and a model configured, `EARLY_MS` and
 * `SETTLED_MS` after every channel connected (V8 gives back start-up garbage once the process has
 * been quiet for a while, so the settled figure is the idle one; the early one is printed too): the web chat, Telegram and Discord against their fakes, and WhatsApp (Baileys
 * loaded, fresh credentials in the temp state dir) aimed by `webSocketUrl` at a silent loopback
 * WebSocket server that accepts the connection and never answers the Noise handshake (see
 * {@link startSilentWhatsApp}), so Baileys sits waiting for the server hello. The state dir,
 * WhatsApp's credentials included, is in the app's temp dir, which `stop()` removes.
 *
 * @returns VmRSS in MB at both points
 */
export async function measureIdleRss(): Promise<{ earlyMb: number; settledMb: number }> {
  const model = await startEchoModel(0);
  const telegram = await FakeTelegram.start();
  telegram.addBot(TELEGRAM_TOKEN, { id: 6006, username: 'colloquy_idle_bot' });
  const whatsapp = await startSilentWhatsApp();
  const discord = await FakeDiscord.start({
    bots: [{ token: DISCORD_TOKEN, username: 'colloquy' }],
    guilds: [{ name: 'Bench Guild', channels: ['general'] }],
  });
  const app = await startBenchApp({
    config: {
      channels: {
        telegram: { accounts: [{ token: TELEGRAM_TOKEN, apiRoot: telegram.apiRoot }] },
        discord: {
          accounts: [
            {
              accountId: 'main',
              token: DISCORD_TOKEN,
              apiRoot: discord.apiRoot,
              gatewayUrl: discord.gatewayUrl,
            },
          ],
        },
        whatsapp: { webSocketUrl: whatsapp.url },
      },
    },
    env: modelEnv(model),
  });
  try {
    await telegram.waitFor(() => telegram.hasPendingPoll(TELEGRAM_TOKEN), 15_000, 'the first long poll');
    const deadline = Date.now() + 15_000;
    while (discord.identifies.length === 0) {
      if (Date.now() > deadline) throw new Error('the app never identified with the Discord fake');
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    await whatsapp.waitForHello(15_000);
    const rssAfter = async (ms: number): Promise<number> => {
      await new Promise((resolve) => setTimeout(resolve, ms));
      if (app.child.exitCode !== null || app.child.signalCode !== null) {
        throw new Error('the app exited while idle');
      }
      return memoryMb(app.pid).rss;
    };
    const earlyMb = await rssAfter(EARLY_MS);
    const settledMb = await rssAfter(SETTLED_MS - EARLY_MS);
    return { earlyMb, settledMb };
  } finally {
    await app.stop();
    await whatsapp.close();
    await discord.close();
    await telegram.close();
    await model.close();
  }
}
