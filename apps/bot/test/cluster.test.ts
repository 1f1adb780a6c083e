import { openPostgresStore } from '@colloquy/store-postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AppProcess, startApp } from './support/app-process.js';
import { inboundRuns, settledRuns } from './support/settled-runs.js';
import { startTelegramCluster, type TelegramCluster } from './support/telegram-cluster.js';

/**
 * The proof of issue 16: three app processes on one PostgreSQL, the Telegram Bot API fake and the
 * OpenAI-compatible fake; 50 users send 10 DMs each and ask for 100 sub-agents while the instance
 * that polls Telegram is SIGKILLed, and later another one, each restarted. Set
 * COLLOQUY_CLUSTER_LOGS=/tmp/prefix to keep each instance's log.
 */
const TOKEN = '5005:cluster-token';
const USERS = 50;
const ROUNDS = 10;
const SPAWNS_PER_USER = 2;

let cluster: TelegramCluster;

beforeAll(async () => {
  cluster = await startTelegramCluster({
    token: TOKEN,
    bot: { id: 5005, username: 'cluster_bot' },
    users: USERS,
    answer: (request) => {
      const messages = request.body.messages as { role: string; content: unknown; tool_calls?: unknown }[];
      const last = messages.at(-1);
      const textOf = (m: { content: unknown } | undefined) =>
        String(m?.content ?? '').replace(/^\[[^\]]*\]\s*/, '');
      const resultsIn = (list: { content: unknown }[]) =>
        list.flatMap((m) => [...textOf(m).matchAll(/Sub-agent "([^"]+)"/g)].map((r) => r[1]));
      // This turn's messages: those after the previous turn's answer (an assistant message without tool
      // calls). A turn a kill cut and another instance resumed keeps its tool calls from before the kill,
      // and what it read then is still this turn's to report.
      const thisTurn = messages.slice(
        messages.findLastIndex((m) => m.role === 'assistant' && m.tool_calls === undefined) + 1,
      );
      if (last?.role === 'tool') {
        // A turn can fold a spawn request together with results it reads: its reply names them too.
        const read = resultsIn(thisTurn);
        return { text: read.length > 0 ? `noted ${read.join(', ')}; spawned` : 'spawned' };
      }
      const text = textOf(last);
      // Messages folded into one turn: every spawn request since the last answer is acted on.
      const since = messages.slice(messages.findLastIndex((m) => m.role === 'assistant') + 1);
      const spawns = since
        .filter((m) => m.role === 'user')
        .map((m) => /^spawn (\S+)$/.exec(textOf(m))?.[1])
        .filter((label): label is string => label !== undefined);
      if (spawns.length > 0) {
        return {
          toolCalls: spawns.map((label) => ({
            name: 'sessions_spawn',
            arguments: { task: `task ${label}`, label },
          })),
        };
      }
      if (text.startsWith('task ')) return { text: `done ${text.slice(5)}`, delayMs: 50 };
      // A result's one chat message is the requester's reply: it names the labels it read.
      const results = resultsIn(thisTurn);
      if (results.length > 0) return { text: `noted ${results.join(', ')}` };
      return { text: `re: ${text}`, delayMs: 20 };
    },
  });
}, 60_000);

afterAll(() => cluster?.stop(process.env.COLLOQUY_CLUSTER_LOGS));

/** The instance whose log says it polls Telegram now (the latest such line across instances). */
function leaseHolder(instances: readonly AppProcess[]): AppProcess | undefined {
  let holder: AppProcess | undefined;
  let latest = -1;
  for (const app of instances) {
    for (const line of logLines(app)) {
      if (line.msg === 'telegram: this instance polls the bot' && line.time > latest) {
        latest = line.time;
        holder = app;
      }
    }
  }
  return holder;
}

function logLines(app: AppProcess): { msg?: string; time: number }[] {
  return app
    .output()
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => {
      try {
        return JSON.parse(line) as { msg?: string; time: number };
      } catch {
        return { time: 0 };
      }
    });
}

function kill(app: AppProcess): Promise<void> {
  return new Promise((resolve) => {
    app.child.once('exit', () => resolve());
    app.child.kill('SIGKILL');
  });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('three instances on one PostgreSQL (graphile-worker)', () => {
  it('answers every message once and announces every sub-agent once while instances are killed', async () => {
    const { pg, telegram, apps } = cluster;
    const url = await pg.createDatabase();
    const { config, env } = cluster.appSettings(url);
    const slots: AppProcess[] = [];
    for (let i = 0; i < 3; i++) {
      const app = await startApp(config, env);
      apps.push(app);
      slots.push(app);
    }
    await telegram.waitFor(() => leaseHolder(slots), 10_000, 'a Telegram poller');

    const spawnRounds = new Set([1, 3, 5, 7].slice(0, SPAWNS_PER_USER));
    let takeoverMs: number | undefined;
    const killTimes: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      for (let user = 1; user <= USERS; user++) {
        const chat = { id: user, type: 'private' as const, first_name: `U${user}` };
        const from = { id: user, is_bot: false, first_name: `U${user}` };
        telegram.pushMessage(TOKEN, { chat, from, text: `u${user} m${round}` });
        if (spawnRounds.has(round))
          telegram.pushMessage(TOKEN, { chat, from, text: `spawn u${user}-r${round}` });
      }
      await sleep(250);
      if (round === 2 || round === 6) {
        // SIGKILL the poller first, then later one that does not poll; each comes back.
        const holder = leaseHolder(slots)!;
        const victim = round === 2 ? holder : slots.find((app) => app !== holder)!;
        const index = slots.indexOf(victim);
        const killedAt = Date.now();
        await kill(victim);
        // The victim is dead once its exit is seen: a turn it ended (and began to send) may have read
        // its clock after killedAt, before the signal landed, so the kill counts from the exit.
        killTimes.push(Date.now());
        if (round === 2) {
          const others = slots.filter((app) => app !== victim);
          await telegram.waitFor(
            () => leaseHolder(others) !== holder && leaseHolder(others),
            15_000,
            'takeover',
          );
          takeoverMs = Date.now() - killedAt;
        }
        slots[index] = await startApp(config, env, {
          stateDir: victim.stateDir,
          configFile: victim.configFile,
        });
        apps.push(slots[index]!);
      }
    }

    const store = await openPostgresStore({ url });
    try {
      const expectedInbound = USERS * ROUNDS + USERS * SPAWNS_PER_USER;
      const runs = await settledRuns(store, expectedInbound);

      // Every user message was stored once and answered: its run (or the turn it folded into) is done.
      const inbound = inboundRuns(runs);
      expect(inbound).toHaveLength(expectedInbound);
      expect(inbound.filter((run) => run.status !== 'done')).toEqual([]);

      // No two turns of one session overlapped (leaders' start and end, from the run records).
      const bySession = new Map<string, [number, number][]>();
      for (const run of runs) {
        if (run.meta?.foldedInto !== undefined || run.startedAt === undefined) continue;
        const list = bySession.get(run.sessionKey) ?? [];
        list.push([run.startedAt, run.endedAt ?? Number.POSITIVE_INFINITY]);
        bySession.set(run.sessionKey, list);
      }
      let overlaps = 0;
      for (const turns of bySession.values()) {
        turns.sort((a, b) => a[0] - b[0]);
        for (let i = 1; i < turns.length; i++) if (turns[i]![0] < turns[i - 1]![1]) overlaps++;
      }
      expect(overlaps).toBe(0);

      // No reply reached a chat twice, and each user saw the answer to their last message.
      const sent = telegram.sentTo();
      const seen = new Map<string, number>();
      for (const message of sent) {
        if (!message.visibleText.startsWith('re: ')) continue;
        const id = `${message.chatId}\u0000${message.visibleText}`;
        seen.set(id, (seen.get(id) ?? 0) + 1);
      }
      expect([...seen.entries()].filter(([, count]) => count > 1)).toEqual([]);
      // Every message was answered: the turn it ran in (its own, or the one it folded into)
      // delivered a reply to its chat.
      const byId = new Map(runs.map((run) => [run.runId, run]));
      // A send a SIGKILL cut in flight is recorded so and never repeated (the chat never gets a
      // reply twice); it is counted and reported, and nothing else may be unanswered.
      const deliveryOf = (run: (typeof runs)[number]) =>
        byId.get((run.meta?.foldedInto as string | undefined) ?? run.runId)?.meta?.delivery as
          | { status?: string; error?: string }
          | undefined;
      const cutReplies = inbound.filter((run) => deliveryOf(run)?.error?.includes('stopped while sending'));
      // Only a kill cuts a send, and only one in flight on its victim: the cut turn ended (its send
      // began) shortly before a kill, and each chat has at most one send in flight at a time.
      const cutByKill = new Map<number, Set<string>>();
      const cutLeaders = new Set(
        cutReplies.map((run) => byId.get((run.meta?.foldedInto as string | undefined) ?? run.runId)!),
      );
      for (const leader of cutLeaders) {
        const endedAt = leader.endedAt ?? Number.POSITIVE_INFINITY;
        const killedAt = killTimes.find((at) => endedAt <= at && at - endedAt < 10_000);
        expect(
          killedAt,
          `${leader.runId} was cut, but no kill came within 10 s after its turn ended (at ${endedAt}; kills at ${killTimes.join(', ')})`,
        ).toBeDefined();
        const chats = cutByKill.get(killedAt!) ?? new Set<string>();
        expect(chats.has(leader.sessionKey), `two sends of ${leader.sessionKey} in flight at one kill`).toBe(
          false,
        );
        chats.add(leader.sessionKey);
        cutByKill.set(killedAt!, chats);
      }
      const unanswered = inbound.filter(
        (run) => deliveryOf(run)?.status !== 'delivered' && !cutReplies.includes(run),
      );
      expect(unanswered.map((run) => `${run.sessionKey}: ${run.message}`)).toEqual([]);

      // Every sub-agent was announced exactly once (one outbox row and inbox entry each), and its
      // one chat message is the requester's reply naming it: never two, never the raw block. A
      // result with none was read by a turn whose send a kill cut, which says so.
      const children = await store.listSessions({ kinds: ['subagent'], limit: 1000 });
      // This fake model acts on the requests after its last answer, so a spawn call a SIGKILL cut
      // before it ran is not made again when the turn resumes: nearly all 100, and each one found
      // exactly once below.
      expect(children.length).toBeGreaterThanOrEqual(USERS * SPAWNS_PER_USER * 0.9);
      const delivered = await store.listOutbox({ statuses: ['delivered', 'parked'] });
      expect(delivered.map((row) => row.childSessionKey).sort()).toEqual(children.map((c) => c.key).sort());
      expect(sent.filter((m) => m.visibleText.includes('Sub-agent'))).toEqual([]);
      let cutSends = 0;
      for (const child of children) {
        const mention = new RegExp(`\\b${child.label}\\b`);
        const copies = sent.filter((m) => m.visibleText.startsWith('noted ') && mention.test(m.visibleText));
        expect(copies.length, child.label).toBeLessThanOrEqual(1);
        if (copies.length === 1) continue;
        const reader = runs.find((run) =>
          ((run.meta?.announceFallbacks as string[] | undefined) ?? []).some((line) => mention.test(line)),
        );
        expect((reader?.meta?.delivery as { status?: string } | undefined)?.status, child.label).toBe(
          'failed',
        );
        cutSends++;
      }
      console.log(
        `cluster proof: ${inbound.length} messages (${cutReplies.length} whose reply a kill cut mid-send), ${children.length} of ${USERS * SPAWNS_PER_USER} sub-agents (${cutSends} results whose reply a kill cut), ${sent.length} chat messages, Telegram lease takeover ${takeoverMs} ms`,
      );
    } finally {
      await store.close();
    }
  }, 240_000);
});
