import { writeFileSync } from 'node:fs';
import { type FakeScriptFn, type OpenAIFake, startOpenAIFake } from '@colloquy/testkit/openai-fake';
import { startTestPostgres, type TestPostgres } from '@colloquy/testkit/postgres';
import { FakeTelegram } from '@colloquy/testkit/telegram-fake';
import type { AppProcess } from './app-process.js';

/** A throwaway PostgreSQL, the Telegram Bot API fake with one bot and its DM users, and a fake model. */
export interface TelegramCluster {
  pg: TestPostgres;
  telegram: FakeTelegram;
  model: OpenAIFake;
  /** Every app process started against it, for the logs and the cleanup. */
  apps: AppProcess[];
  /** The config and environment of an app instance on the database `url`. */
  appSettings(url: string): { config: Record<string, unknown>; env: Record<string, string> };
  /** Stops the apps and the fakes; writes each app's log to `<logs>-<i>.log` when `logs` is set. */
  stop(logs?: string): Promise<void>;
}

/**
 * Starts what several app instances share: PostgreSQL, the Telegram fake with `bot` and DM chats
 * 1..`users`, and the OpenAI-compatible fake answering with `answer`.
 */
export async function startTelegramCluster(options: {
  token: string;
  bot: { id: number; username: string };
  users: number;
  answer: FakeScriptFn;
}): Promise<TelegramCluster> {
  const pg = await startTestPostgres();
  const telegram = await FakeTelegram.start();
  telegram.addBot(options.token, options.bot);
  for (let user = 1; user <= options.users; user++) telegram.addChat(user, { type: 'private' });
  const model = await startOpenAIFake(options.answer);
  const apps: AppProcess[] = [];
  return {
    pg,
    telegram,
    model,
    apps,
    appSettings: (url) => ({
      config: {
        gateway: { token: `shared-admin-token-of-${options.bot.username}` },
        channels: {
          telegram: { accounts: [{ token: options.token, apiRoot: telegram.apiRoot }], dmPolicy: 'open' },
        },
      },
      env: { COLLOQUY_DATABASE_URL: url, COLLOQUY_MODEL: 'fake/m', OPENAI_BASE_URL: model.baseURL },
    }),
    async stop(logs) {
      if (logs) for (const [i, app] of apps.entries()) writeFileSync(`${logs}-${i}.log`, app.output());
      await Promise.allSettled(apps.map((app) => app.cleanup()));
      await Promise.allSettled([telegram.close(), model.close()]);
      await pg.stop();
    },
  };
}
