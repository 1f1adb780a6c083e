import { type OpenAIFake, startOpenAIFake } from '@colloquy/testkit/openai-fake';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AppProcess, startApp } from './support/app-process.js';
import { openProbe } from './support/ws-probe.js';

let fake: OpenAIFake;
let app: AppProcess;
let origin: string;

const INJECTION = '<script>window.__pwned=1</script><img src=x onerror="window.__pwned=2">';

beforeAll(async () => {
  fake = await startOpenAIFake((request) => {
    const messages = request.body.messages as { role: string; content: unknown }[];
    return { text: `You wrote: ${String(messages.filter((m) => m.role === 'user').at(-1)?.content ?? '')}` };
  });
  app = await startApp({}, { COLLOQUY_MODEL: 'fake/m', OPENAI_BASE_URL: fake.baseURL });
  origin = new URL(app.webchatUrl).origin;
}, 30_000);

afterAll(async () => {
  await app?.cleanup();
  await fake?.close();
});

const chatSocket = () => openProbe(`${origin.replace('http', 'ws')}/ws`, { origin });
const gatewaySocket = (headers: Record<string, string> = {}) => openProbe(app.gatewayUrl, headers);

async function stillServing(): Promise<void> {
  expect((await fetch(`${origin}/healthz`)).status).toBe(200);
  const gateway = await gatewaySocket({ authorization: `Bearer ${app.token}` });
  gateway.send(JSON.stringify({ id: 'alive', method: 'agents.list', params: {} }));
  expect(await gateway.next((f) => f.id === 'alive')).toMatchObject({ ok: true });
  gateway.close();
  expect(app.child.exitCode).toBeNull();
}

describe('the web chat refuses bad input and keeps running', () => {
  it('answers invalid JSON and oversized messages with error frames on the same connection', async () => {
    const chat = await chatSocket();
    await chat.next((f) => f.type === 'ready');
    chat.send('{not json');
    expect(await chat.next((f) => f.type === 'error' && f.code === 'invalid_json')).toBeDefined();
    chat.send(JSON.stringify({ type: 'message', text: 'x'.repeat(8001), clientId: 'big' }));
    expect(await chat.next((f) => f.type === 'error' && f.clientId === 'big')).toMatchObject({
      code: 'too_long',
    });
    chat.send(JSON.stringify({ type: 'launch-missiles' }));
    expect(await chat.next((f) => f.type === 'error' && f.code === 'invalid_frame')).toBeDefined();
    chat.send(JSON.stringify({ type: 'ping' }));
    expect(await chat.next((f) => f.type === 'pong')).toBeDefined();
    expect(chat.closeCode()).toBeUndefined();
    chat.close();
    await stillServing();
  });

  it('closes a connection that sends a frame over the size cap (1009)', async () => {
    const chat = await chatSocket();
    chat.send(JSON.stringify({ type: 'message', text: 'y'.repeat(2 * 1024 * 1024) }));
    expect(await chat.closed()).toBe(1009);
    await stillServing();
  });

  it('keeps script injection as inert text: stored verbatim, served under a strict CSP', async () => {
    const chat = await chatSocket();
    await chat.next((f) => f.type === 'ready');
    chat.send(JSON.stringify({ type: 'message', text: INJECTION, clientId: 'inj' }));
    const echo = await chat.next((f) => f.type === 'message' && f.clientId === 'inj');
    expect((echo.message as { text: string }).text).toBe(INJECTION);
    const reply = await chat.next(
      (f) => f.type === 'message' && (f.message as { role: string }).role === 'assistant',
      10_000,
    );
    expect((reply.message as { text: string }).text).toBe(`You wrote: ${INJECTION}`);
    chat.close();
    const page = await fetch(`${origin}/`);
    const html = await page.text();
    expect(html).not.toContain('__pwned');
    expect(page.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect(page.headers.get('x-content-type-options')).toBe('nosniff');
    await stillServing();
  });

  it('refuses a WebSocket from another origin', async () => {
    await expect(
      openProbe(`${origin.replace('http', 'ws')}/ws`, { origin: 'http://evil.example' }),
    ).rejects.toThrow('HTTP 403');
  });

  it('refuses owner endpoints without the admin token', async () => {
    expect((await fetch(`${origin}/api/sessions`)).status).toBe(401);
    const wrong = await fetch(`${origin}/api/sessions`, {
      headers: { authorization: 'Bearer nope-nope-nope' },
    });
    expect(wrong.status).toBe(401);
    const guess = await fetch(`${origin}/?admin=not-the-token`, { redirect: 'manual' });
    expect(guess.headers.get('set-cookie') ?? '').not.toContain('colloquy_admin');
    const right = await fetch(`${origin}/api/sessions`, {
      headers: { authorization: `Bearer ${app.token}` },
    });
    expect(right.status).toBe(200);
    await stillServing();
  });
});

describe('the gateway refuses bad input and keeps running', () => {
  it('refuses a wrong token at the upgrade, and calls before authentication', async () => {
    await expect(gatewaySocket({ authorization: 'Bearer wrong-token' })).rejects.toThrow('HTTP 401');
    const anonymous = await gatewaySocket();
    anonymous.send(JSON.stringify({ id: 1, method: 'sessions.list', params: {} }));
    expect(await anonymous.next((f) => f.id === 1)).toMatchObject({
      ok: false,
      error: { code: 'UNAUTHORIZED' },
    });
    expect(await anonymous.closed()).toBe(4401);
    await stillServing();
  });

  it('answers invalid JSON, bad frames and unknown methods with errors and keeps the connection', async () => {
    const gateway = await gatewaySocket({ authorization: `Bearer ${app.token}` });
    gateway.send('{"id": 1, "method": ');
    expect(await gateway.next((f) => f.ok === false && f.id === null)).toMatchObject({
      error: { code: 'INVALID_ARGUMENT' },
    });
    gateway.send(JSON.stringify({ id: 2, method: 'sessions.drop_all', params: {} }));
    expect(await gateway.next((f) => f.id === 2)).toMatchObject({
      ok: false,
      error: { code: 'NOT_SUPPORTED' },
    });
    gateway.send(JSON.stringify({ id: 3, method: 'sessions.list', params: { limit: 'lots' } }));
    expect(await gateway.next((f) => f.id === 3)).toMatchObject({
      ok: false,
      error: { code: 'INVALID_ARGUMENT' },
    });
    gateway.send(JSON.stringify({ id: 4, method: 'agents.list', params: {} }));
    expect(await gateway.next((f) => f.id === 4)).toMatchObject({ ok: true });
    gateway.close();
  });

  it('closes a connection that sends a frame over 1 MiB (1009)', async () => {
    const gateway = await gatewaySocket({ authorization: `Bearer ${app.token}` });
    gateway.send(
      JSON.stringify({
        id: 5,
        method: 'agent',
        params: { sessionKey: 'main', message: 'z'.repeat(1_100_000) },
      }),
    );
    expect(await gateway.closed()).toBe(1009);
    await stillServing();
  });
});
