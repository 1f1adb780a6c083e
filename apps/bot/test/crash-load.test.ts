import { join } from 'node:path';
import { openSqliteStore } from '@colloquy/store-sqlite';
import { type OpenAIFake, startOpenAIFake } from '@colloquy/testkit/openai-fake';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { type AppProcess, startApp } from './support/app-process.js';

/**
 * The load-and-crash check of issue 20: web chat visitors send 50 messages/s while the app is
 * SIGKILLed (10 rounds) and SIGTERMed (4 rounds), restarted on the same state directory each time.
 * Every message a visitor saw acknowledged (the echo) must be stored exactly once and answered
 * once; messages refused while stopping must have been refused explicitly (an error frame naming
 * them) and not stored, and a SIGTERM leaves no message unanswered but those in flight at the close.
 */
const VISITORS = 20;
const RATE_PER_SECOND = 50;
const SEND_MS = 1500;
const ROUNDS: readonly ('SIGKILL' | 'SIGTERM')[] = [
  ...Array<'SIGKILL'>(10).fill('SIGKILL'),
  ...Array<'SIGTERM'>(4).fill('SIGTERM'),
];

let model: OpenAIFake;
const apps: AppProcess[] = [];

beforeAll(async () => {
  model = await startOpenAIFake((request) => {
    const messages = request.body.messages as { role: string; content: unknown }[];
    const last = messages.filter((m) => m.role === 'user').at(-1);
    return { text: `re: ${String(last?.content ?? '').replace(/^\[[^\]]*\]\s*/, '')}`, delayMs: 30 };
  });
});

afterAll(async () => {
  await Promise.allSettled(apps.map((app) => app.cleanup()));
  await model?.close();
});

interface Visitor {
  cookie?: string;
  socket?: WebSocket;
}

/** Opens a visitor's socket (keeping the cookie the server sets on the first one). */
function connect(base: string, visitor: Visitor, acked: Set<string>, refused: Set<string>): Promise<void> {
  const origin = base.replace(/\/$/, '');
  const socket = new WebSocket(`${origin.replace('http', 'ws')}/ws`, {
    headers: { origin, ...(visitor.cookie ? { cookie: visitor.cookie } : {}) },
  });
  socket.on('upgrade', (res) => {
    const set = res.headers['set-cookie']?.[0];
    if (set) visitor.cookie = set.split(';')[0];
  });
  socket.on('message', (data) => {
    const frame = JSON.parse(String(data)) as { type: string; clientId?: string };
    if (frame.clientId === undefined) return;
    if (frame.type === 'message') acked.add(frame.clientId);
    else if (frame.type === 'error') refused.add(frame.clientId);
  });
  socket.on('error', () => {});
  visitor.socket = socket;
  return new Promise((resolve, reject) => {
    socket.once('open', () => resolve());
    socket.once('unexpected-response', (_req, res) => reject(new Error(`HTTP ${res.statusCode}`)));
  });
}

describe('acknowledged web chat messages across crashes and restarts', () => {
  it('loses and doubles none over 10 SIGKILL and 4 SIGTERM rounds at 50 messages/s', async () => {
    const env = { COLLOQUY_MODEL: 'fake/m', OPENAI_BASE_URL: model.baseURL };
    const config = {
      channels: {
        webchat: {
          rateLimit: { burst: 1000, perSecond: 1000 },
          addressRateLimit: { burst: 1000, perSecond: 1000 },
        },
      },
    };
    const visitors: Visitor[] = Array.from({ length: VISITORS }, () => ({}));
    const acked = new Set<string>();
    const refused = new Set<string>();
    const sent = new Map<string, string>();
    let app = await startApp(config, env);
    apps.push(app);
    for (const [round, signal] of ROUNDS.entries()) {
      for (const visitor of visitors) await connect(app.webchatUrl, visitor, acked, refused);
      const stopAt = Date.now() + SEND_MS;
      let killed: Promise<void> | undefined;
      let exited = false;
      // Messages keep coming while the process dies, as they would from real visitors.
      for (let n = 0; !exited; n++) {
        const visitor = visitors[n % VISITORS]!;
        const clientId = `r${round}-${n}`;
        if (visitor.socket?.readyState === WebSocket.OPEN) {
          const text = `round ${round} message ${n}`;
          visitor.socket.send(JSON.stringify({ type: 'message', text, clientId }));
          sent.set(clientId, text);
        }
        if (!killed && Date.now() >= stopAt) {
          const child = app.child;
          killed = new Promise((resolve) =>
            child.once('exit', () => {
              exited = true;
              resolve();
            }),
          );
          child.kill(signal);
        }
        await new Promise((resolve) => setTimeout(resolve, 1000 / RATE_PER_SECOND));
      }
      await killed;
      for (const visitor of visitors) visitor.socket?.terminate();
      app = await startApp(config, env, { stateDir: app.stateDir, configFile: app.configFile });
      apps.push(app);
    }
    // The last start resumes what the crashes cut; wait until every run is over, then stop.
    const file = join(app.stateDir, 'colloquy.db');
    const deadline = Date.now() + 60_000;
    for (;;) {
      const probe = openSqliteStore({ file });
      try {
        const active = await probe.listRuns({ statuses: ['queued', 'running'] });
        if (active.length === 0) break;
      } finally {
        await probe.close();
      }
      if (Date.now() > deadline) throw new Error('runs did not settle within 60 s');
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expect(await app.stop()).toBe(0);

    const store = openSqliteStore({ file });
    try {
      const userTexts = new Map<string, number>();
      const replies = new Map<string, number>();
      for (const session of await store.listSessions({ limit: 1000 })) {
        for (const message of await store.readTail(session.key, 100_000)) {
          const text = typeof message.content === 'string' ? message.content : '';
          const map =
            message.role === 'user' ? userTexts : message.role === 'assistant' ? replies : undefined;
          map?.set(text, (map.get(text) ?? 0) + 1);
        }
      }
      const lost = [...acked].filter((id) => !userTexts.has(sent.get(id)!));
      const duplicated = [...userTexts.entries()].filter(([, count]) => count > 1).map(([text]) => text);
      const doubleAnswered = [...replies.entries()].filter(([, count]) => count > 1).map(([text]) => text);
      const silentIds = [...sent.keys()].filter((id) => !acked.has(id) && !refused.has(id));
      const silent = silentIds.length;
      // A refusal tells the visitor to send again, so a refused message must not have been stored.
      const refusedButStored = [...refused].filter((id) => userTexts.has(sent.get(id)!));
      // A SIGTERM drains: what reached an open socket is acknowledged or refused, except a message
      // still in flight on a socket when the server closed it (at most one per visitor per round).
      const silentOnTerm = silentIds.filter((id) => ROUNDS[Number(/^r(\d+)-/.exec(id)![1])] === 'SIGTERM');
      const runs = await store.listRuns({ limit: 100_000 });
      const unfinished = runs.filter((run) => run.status !== 'done' && run.status !== 'interrupted');
      console.log(
        `crash-load: ${ROUNDS.length} rounds (10 SIGKILL, 4 SIGTERM), ${sent.size} sent, ${acked.size} acknowledged, ` +
          `${refused.size} refused with an error, ${silent} unanswered while the process died ` +
          `(${silentOnTerm.length} of them in SIGTERM rounds), ` +
          `${lost.length} lost, ${duplicated.length} duplicated, ${doubleAnswered.length} answered twice`,
      );
      expect(acked.size).toBeGreaterThan(ROUNDS.length * 40);
      expect(lost).toEqual([]);
      expect(refusedButStored).toEqual([]);
      expect(silentOnTerm.length).toBeLessThanOrEqual(
        VISITORS * ROUNDS.filter((r) => r === 'SIGTERM').length,
      );
      expect(duplicated).toEqual([]);
      expect(doubleAnswered).toEqual([]);
      expect(unfinished).toEqual([]);
    } finally {
      await store.close();
    }
  }, 240_000);
});
