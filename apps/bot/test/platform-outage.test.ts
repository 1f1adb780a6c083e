import {
  fakeReply,
  type OpenAIFake,
  type RecordedRequest,
  startOpenAIFake,
} from '@colloquy/testkit/openai-fake';
import { FakeTelegram } from '@colloquy/testkit/telegram-fake';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AppProcess, type CliRun, runCliProcess, startApp } from './support/app-process.js';
import { eventually } from './support/bot-fixture.js';

// The app on Telegram while the Bot API's send methods answer 502: the owner sees the replies
// waiting in `colloquy status` (and its JSON), and sees the backlog drain to zero once the API is
// back. The plugin tests check delivery in detail; this one checks what the owner is shown.

const TOKEN = '4004:outage-app-token';
const CHATS = [101, 102, 103];
const ROUNDS = 2;

let telegram: FakeTelegram;
let model: OpenAIFake;
let app: AppProcess;

/** The `m<chat>-<round>` a request's last user message carries. */
function wrote(request: RecordedRequest): string | undefined {
  const messages = (request.body?.messages ?? []) as { role: string; content: unknown }[];
  const last = messages.filter((message) => message.role === 'user').at(-1);
  return /m\d+-\d+/.exec(JSON.stringify(last?.content ?? ''))?.[0];
}

const text = (chat: number, round: number) => `m${chat}-${round}`;

beforeAll(async () => {
  telegram = await FakeTelegram.start();
  telegram.addBot(TOKEN, { id: 4004, username: 'outage_app_bot' });
  for (const id of CHATS) telegram.addChat(id, { type: 'private' });
  model = await startOpenAIFake((request) => fakeReply.text(`echo: ${wrote(request)}`));
  app = await startApp({
    agents: { defaults: { model: 'local/test-model' } },
    models: { providers: { local: { kind: 'openai-compatible', baseURL: model.baseURL } } },
    channels: {
      telegram: { accounts: [{ token: TOKEN, apiRoot: telegram.apiRoot }], dmPolicy: 'open' },
    },
    runtime: { deliveryRetry: { firstDelayMs: 200, maxDelayMs: 1000 } },
  });
}, 60_000);

afterAll(async () => {
  await app?.cleanup();
  await telegram?.close();
  await model?.close();
});

/** The CLI in the app's directory (it finds colloquy.json5 there) with the app's state dir. */
const cli = (...args: string[]) => runCliProcess([...args, '--state-dir', 'state'], { cwd: app.dir });

/** Runs `colloquy status` until `check` accepts its output (run.json is refreshed every 5 s). */
const statusUntil = (check: (stdout: string) => boolean) =>
  eventually(async () => {
    const run: CliRun = await cli('status');
    return check(run.stdout) ? run : undefined;
  }, 30_000);

const outboxOf = async () =>
  (JSON.parse((await cli('status', '--json')).stdout) as { outbox: Record<string, unknown> }).outbox;

describe('the app while the chat platform is down', () => {
  it('shows the replies waiting in colloquy status, and the backlog drained to zero after', async () => {
    telegram.startOutage({ status: 502, methods: ['sendMessage', 'sendChatAction'] });
    // One message per chat a round, each round answered by the model before the next: one reply each.
    for (let round = 0; round < ROUNDS; round++) {
      for (const id of CHATS) {
        telegram.pushMessage(TOKEN, {
          chat: { id, type: 'private', first_name: `U${id}` },
          from: { id, is_bot: false, first_name: `U${id}` },
          text: text(id, round),
        });
      }
      const asked = CHATS.map((id) => text(id, round));
      await eventually(() => {
        const seen = new Set(model.requests.map(wrote));
        return asked.every((wanted) => seen.has(wanted)) || undefined;
      }, 20_000);
    }

    const total = CHATS.length * ROUNDS;
    const down = await statusUntil(
      (out) =>
        out.includes(`Outbox:   ${total} replies not sent yet (telegram ${total}), the oldest for`) &&
        out.includes(`; ${CHATS.length} chats wait for their platform, which failed`),
    );
    expect(down.code).toBe(0);
    expect(await outboxOf()).toMatchObject({
      pending: total,
      failingTargets: CHATS.length,
      byChannel: { telegram: total },
    });
    expect(telegram.sent).toHaveLength(0);

    telegram.endOutage();
    await telegram.waitFor(() => telegram.sent.length >= total, 30_000, 'every reply');
    for (const id of CHATS) {
      expect(telegram.sentTo(id).map((m) => m.visibleText)).toEqual(
        Array.from({ length: ROUNDS }, (_, round) => `echo: ${text(id, round)}`),
      );
    }
    const drained = await statusUntil((out) => !out.includes('Outbox:'));
    expect(drained.stdout).toMatch(/Channels: webchat connected, telegram connected/);
    expect(await outboxOf()).toEqual({ pending: 0, failingTargets: 0, byChannel: {} });
    expect(telegram.sent).toHaveLength(total);
  }, 120_000);
});
