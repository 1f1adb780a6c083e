import { openPostgresStore } from '@colloquy/store-postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp } from './support/app-process.js';
import { inboundRuns, settledRuns } from './support/settled-runs.js';
import { startTelegramCluster, type TelegramCluster } from './support/telegram-cluster.js';

/**
 * Issue 33: three app processes on one PostgreSQL while Telegram DMs arrive at 40 a second, and the
 * server stops (fast shutdown) mid-load and starts again. Set COLLOQUY_RESTART_LOGS=/tmp/prefix to
 * keep each instance's log.
 */
const TOKEN = '5006:restart-token';
const USERS = 40;
const ROUNDS = 10;
const PER_SECOND = 40;
/** The server stops after this many messages were sent (a third of the load). */
const STOP_AFTER = 130;
/**
 * How long the server stays down: DMs keep arriving meanwhile. COLLOQUY_RESTART_DOWN_MS=0 makes it
 * `pg_ctl restart -m fast` (stop, then start at once).
 */
const DOWN_MS = Number(process.env.COLLOQUY_RESTART_DOWN_MS ?? 3000);

let cluster: TelegramCluster;

beforeAll(async () => {
  cluster = await startTelegramCluster({
    token: TOKEN,
    bot: { id: 5006, username: 'restart_bot' },
    users: USERS,
    answer: (request) => {
      const messages = request.body.messages as { role: string; content: unknown }[];
      const text = String(messages.at(-1)?.content ?? '').replace(/^\[[^\]]*\]\s*/, '');
      return { text: `re: ${text}`, delayMs: 20 };
    },
  });
}, 60_000);

afterAll(() => cluster?.stop(process.env.COLLOQUY_RESTART_LOGS));

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('three instances while PostgreSQL restarts', () => {
  it('keep running, and answer every DM once, none confirmed to Telegram before it was stored', async () => {
    const { pg, telegram, apps } = cluster;
    const url = await pg.createDatabase();
    const { config, env } = cluster.appSettings(url);
    for (let i = 0; i < 3; i++) apps.push(await startApp(config, env));
    await telegram.waitFor(() => telegram.hasPendingPoll(TOKEN), 15_000, 'a Telegram poller');

    const total = USERS * ROUNDS;
    const startedAt = Date.now();
    let firstWhileDown: number | undefined;
    let confirmedWhileDown = 0;
    let serverBackAt = 0;
    let restart: Promise<void> | undefined;
    let lastPushed = 0;
    for (let sent = 0; sent < total; sent++) {
      const user = (sent % USERS) + 1;
      const round = Math.floor(sent / USERS);
      const chat = { id: user, type: 'private' as const, first_name: `U${user}` };
      const from = { id: user, is_bot: false, first_name: `U${user}` };
      const { updateId } = telegram.pushMessage(TOKEN, { chat, from, text: `u${user} m${round}` });
      lastPushed = updateId;
      if (sent === STOP_AFTER) {
        restart = (async () => {
          await pg.stopServer();
          // Updates pushed while the server was shutting down may have been stored: the first one
          // that cannot be is the first pushed once it is down.
          firstWhileDown = lastPushed + 1;
          await sleep(DOWN_MS);
          // Nothing pushed since the server went down can be stored yet: the offset stays below it.
          confirmedWhileDown = telegram.confirmedOffset(TOKEN);
          await pg.startServer();
          serverBackAt = Date.now();
        })();
      }
      await sleep(Math.max(0, startedAt + ((sent + 1) * 1000) / PER_SECOND - Date.now()));
    }
    await restart;

    const store = await openPostgresStore({ url });
    try {
      const runs = await settledRuns(store, total);

      // Every instance rode the restart out: none exited, each reconnected by itself.
      expect(apps.map((app) => app.child.exitCode ?? app.child.signalCode)).toEqual([null, null, null]);
      for (const app of apps) expect(app.output()).toContain('cluster: the control connection is back');

      const inbound = inboundRuns(runs);
      const byId = new Map(runs.map((run) => [run.runId, run]));
      const leaderOf = (run: (typeof runs)[number]) =>
        byId.get((run.meta?.foldedInto as string | undefined) ?? run.runId);
      const texts = inbound.map((run) => run.message.replace(/^\[[^\]]*\]\s*/, ''));
      const lost = total - new Set(texts).size;
      const storedTwice = texts.length - new Set(texts).size;
      // Answered as the user sees it: the chat got the reply of the turn the message ran in (its
      // own, or the one it folded into; the fake model answers a turn's last message). The store's
      // delivery record is not the measure: a reply sent while the server went down is in the chat
      // though its record could not be written.
      const sentByChat = new Set(telegram.sentTo().map((m) => `${m.chatId}\u0000${m.visibleText}`));
      const turnOf = new Map<string, string[]>();
      for (const run of inbound) {
        const leader = leaderOf(run)?.runId ?? run.runId;
        turnOf.set(leader, [...(turnOf.get(leader) ?? []), run.message]);
      }
      const chatOf = (run: (typeof runs)[number]) => run.sessionKey.split(':').at(-1);
      const unanswered = inbound.filter(
        (run) =>
          run.status !== 'done' ||
          !(turnOf.get(leaderOf(run)?.runId ?? run.runId) ?? []).some((text) =>
            sentByChat.has(`${chatOf(run)}\u0000re: ${text}`),
          ),
      );
      const replies = new Map<string, number>();
      for (const message of telegram.sentTo()) {
        const id = `${message.chatId}\u0000${message.visibleText}`;
        replies.set(id, (replies.get(id) ?? 0) + 1);
      }
      const repliedTwice = [...replies.entries()].filter(([, count]) => count > 1);
      const firstReplyBack = telegram.callsOf('sendMessage').find((call) => call.at >= serverBackAt)?.at;
      console.log(
        `postgres restart: ${total} DMs, ${lost} lost, ${storedTwice + repliedTwice.length} duplicated, ${unanswered.length} unanswered; server down ${DOWN_MS} ms, first reply ${firstReplyBack === undefined ? 'never' : `${firstReplyBack - serverBackAt} ms`} after it was back; offset confirmed while down ${confirmedWhileDown} (first update sent while down: ${firstWhileDown})`,
      );
      expect(lost).toBe(0);
      expect(storedTwice).toBe(0);
      expect(repliedTwice).toEqual([]);
      expect(
        unanswered.map(
          (run) =>
            `${run.sessionKey}: ${run.message} (${run.status}, ${JSON.stringify(leaderOf(run)?.meta?.delivery)})`,
        ),
      ).toEqual([]);
      if (DOWN_MS > 0) expect(confirmedWhileDown).toBeLessThanOrEqual(firstWhileDown!);
      expect(telegram.confirmedOffset(TOKEN)).toBeGreaterThan(firstWhileDown!);
    } finally {
      await store.close();
    }
  }, 240_000);
});
