import type { IncomingMessage } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { ADMIN_TOKEN, type Started, startWebChat } from './support/start.js';
import { TestClient } from './support/ws-client.js';

/**
 * One client without a cookie must not lock other visitors out or dodge the rate limit (issue 20
 * item 1). Everyone is 127.0.0.1 here, so the server trusts 127.0.0.1 as a proxy and each test
 * client names its address in X-Forwarded-For: the flooder and a real visitor are two addresses.
 */
const FLOODER = '198.51.100.7';
const VISITOR = '203.0.113.9';
const BEHIND_PROXY = { trustedProxies: ['127.0.0.1'] };

let running: Started[] = [];
const sockets: WebSocket[] = [];
const clients: TestClient[] = [];

async function start(...args: Parameters<typeof startWebChat>): Promise<Started> {
  const started = await startWebChat(...args);
  running.push(started);
  return started;
}

afterEach(async () => {
  for (const c of clients.splice(0)) c.close();
  for (const s of sockets.splice(0)) s.terminate();
  for (const s of running) await s.stop();
  running = [];
});

type Attempt = { ok: true; socket: WebSocket } | { ok: false; status: number; body: string };

/** Opens a cookie-less socket as `address`; a refusal comes back with its status and body. */
async function attempt(base: string, address: string): Promise<Attempt> {
  const socket = new WebSocket(new URL('ws', base.replace(/^http/, 'ws')), {
    headers: { 'x-forwarded-for': address },
  });
  return new Promise((resolve, reject) => {
    socket.once('open', () => {
      sockets.push(socket);
      resolve({ ok: true, socket });
    });
    socket.once('unexpected-response', (_req, res: IncomingMessage) => {
      let body = '';
      res.on('data', (chunk) => {
        body += String(chunk);
      });
      res.on('end', () => resolve({ ok: false, status: res.statusCode ?? 0, body }));
    });
    socket.once('error', reject);
  });
}

async function visitor(base: string, address = VISITOR): Promise<TestClient> {
  const c = await TestClient.connect(base, { headers: { 'x-forwarded-for': address } });
  clients.push(c);
  return c;
}

async function chats(c: TestClient, text: string): Promise<void> {
  c.send({ type: 'message', text, clientId: 'real' });
  await c.next('message', (f) => f.message.role === 'assistant' && f.message.text === `You said: ${text}`);
  expect(c.all('error')).toEqual([]);
}

describe('web chat limits per client address', () => {
  it('a flood of cookie-less sockets from one address is refused with 429 while another visitor connects and chats', async () => {
    const { base } = await start({
      ...BEHIND_PROXY,
      maxSockets: 60,
      maxSocketsPerAddress: 20,
      newVisitorsPerMinute: 1000,
    });
    const results: Attempt[] = [];
    for (let i = 0; i < 80; i++) results.push(await attempt(base, FLOODER));
    const opened = results.filter((r) => r.ok);
    const refused = results.filter((r): r is Extract<Attempt, { ok: false }> => !r.ok);
    expect(opened).toHaveLength(20);
    expect(new Set(refused.map((r) => r.status))).toEqual(new Set([429]));
    expect(refused[0]!.body).toMatch(/Too many open chats from your address \(at most 20\)/);

    await chats(await visitor(base), 'hello from a real visitor');

    // Closed sockets give their slots back.
    const first = opened[0] as Extract<Attempt, { ok: true }>;
    await new Promise((resolve) => {
      first.socket.once('close', resolve);
      first.socket.close();
    });
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect((await attempt(base, FLOODER)).ok).toBe(true);
    expect(await attempt(base, FLOODER)).toMatchObject({ ok: false, status: 429 });
  });

  it('limits new identities per address per minute, on the socket and on the page', async () => {
    const { base } = await start({ ...BEHIND_PROXY, newVisitorsPerMinute: 5 });
    const results: Attempt[] = [];
    for (let i = 0; i < 8; i++) results.push(await attempt(base, FLOODER));
    expect(results.map((r) => (r.ok ? 101 : r.status))).toEqual([101, 101, 101, 101, 101, 429, 429, 429]);
    expect(results[5]).toMatchObject({
      body: expect.stringMatching(/Too many new visitors from your address/),
    });
    const page = await fetch(base, { headers: { 'x-forwarded-for': FLOODER } });
    expect(page.status).toBe(429);
    expect(await page.text()).toMatch(/keep your cookie, or try again in a minute/);

    // A visitor that keeps its cookie is not a new identity; another address has its own budget.
    const first = results[0] as Extract<Attempt, { ok: true }>;
    expect(first.ok).toBe(true);
    expect((await fetch(base, { headers: { 'x-forwarded-for': VISITOR } })).status).toBe(200);
    await chats(await visitor(base), 'still welcome');
  });

  it('messages from many cookie-less visitors of one address share one rate limit; other addresses are unaffected', async () => {
    const { base, host } = await start(
      { ...BEHIND_PROXY, newVisitorsPerMinute: 1000 },
      { reply: () => 'ok' },
    );
    const flood: TestClient[] = [];
    for (let i = 0; i < 20; i++) flood.push(await visitor(base, FLOODER));
    // 20 visitors x 20 messages: each visitor alone would pass 8 of its bucket, 160 in all.
    const floodStarted = Date.now();
    for (const c of flood) for (let i = 0; i < 20; i++) c.send({ type: 'message', text: `spam ${i}` });
    // Every one of the 400 messages is answered: accepted (received) or refused (an error frame).
    const answered = () =>
      host.received.filter((m) => m.text.startsWith('spam')).length +
      flood.reduce((n, c) => n + c.all('error').length, 0);
    await waitUntil(() => answered() === 400, 10_000, 'every flood message accepted or refused');
    const floodSeconds = (Date.now() - floodStarted) / 1000;
    await host.idle();
    const accepted = host.received.filter((m) => m.text.startsWith('spam')).length;
    expect(accepted).toBeGreaterThanOrEqual(30);
    // The burst of 30, plus the 3/s refill over however long this machine took to send the flood.
    expect(accepted).toBeLessThanOrEqual(30 + Math.ceil(3 * floodSeconds));
    const refusals = flood.flatMap((c) => c.all('error'));
    expect(refusals.length).toBe(400 - accepted);
    expect(refusals.some((e) => /Too many messages from your address/.test(e.message))).toBe(true);

    const real = await visitor(base);
    real.send({ type: 'message', text: 'hi', clientId: 'real' });
    await real.next('message', (f) => f.message.role === 'assistant' && f.message.text === 'ok');
    expect(real.all('error')).toEqual([]);
  });

  it('closes a socket that sends no message within idleSocketMs, and keeps one that does and the owner', async () => {
    const { base } = await start({ ...BEHIND_PROXY, idleSocketMs: 300 });
    const parked = await visitor(base, FLOODER);
    const owner = await TestClient.connect(base, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    clients.push(owner);
    const talking = await visitor(base);
    talking.send({ type: 'message', text: 'here' });
    await talking.next('message', (f) => f.message.role === 'assistant');
    await new Promise((resolve) => setTimeout(resolve, 600));
    expect(parked.closeCode).toBe(4408);
    expect(talking.closeCode).toBeUndefined();
    expect(owner.closeCode).toBeUndefined();
    // Its slot is free again.
    await chats(await visitor(base, FLOODER), 'back again');
  });

  it('ignores X-Forwarded-For unless the peer is a trusted proxy', async () => {
    const { base } = await start({ maxSocketsPerAddress: 2 });
    expect((await attempt(base, '192.0.2.1')).ok).toBe(true);
    expect((await attempt(base, '192.0.2.2')).ok).toBe(true);
    expect(await attempt(base, '192.0.2.3')).toMatchObject({ ok: false, status: 429 });
  });
});

/** Polls `done` every 10 ms until it holds, failing after `timeoutMs` with what was awaited. */
async function waitUntil(done: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`not within ${timeoutMs} ms: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
