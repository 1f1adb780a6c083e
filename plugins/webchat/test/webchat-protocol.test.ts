import { ColloquyError } from '@colloquy/core';
import { afterEach, describe, expect, it } from 'vitest';
import { createWebChatPlugin } from '../src/index.js';
import { FakeHost } from './support/fake-host.js';
import { ADMIN_TOKEN, COOKIE_SECRET, type Started, startWebChat } from './support/start.js';
import { TestClient } from './support/ws-client.js';

let running: Started[] = [];
const clients: TestClient[] = [];

async function start(...args: Parameters<typeof startWebChat>): Promise<Started> {
  const started = await startWebChat(...args);
  running.push(started);
  return started;
}

async function client(base: string, options?: Parameters<typeof TestClient.connect>[1]): Promise<TestClient> {
  const c = await TestClient.connect(base, options);
  clients.push(c);
  await c.next('history');
  return c;
}

afterEach(async () => {
  for (const c of clients.splice(0)) c.close();
  for (const s of running) await s.stop();
  running = [];
});

describe('web chat HTTP', () => {
  it('serves the page with a CSP, nosniff and a signed HttpOnly visitor cookie', async () => {
    const { base } = await start({ title: 'Help <desk>' });
    const res = await fetch(base);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-security-policy')).toContain("default-src 'self'");
    expect(res.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(res.headers.get('set-cookie')).toMatch(
      /^colloquy_vid=v_[\w-]{20}\.[\w-]+; Path=\/; HttpOnly; SameSite=Lax/,
    );
    const html = await res.text();
    expect(html).toContain('<title>Help &#60;desk&#62;</title>');
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)/);
  });

  it('serves the page bundle and nothing outside it', async () => {
    const { base } = await start();
    const js = await fetch(new URL('static/page/main.js', base));
    expect(js.status).toBe(200);
    expect(js.headers.get('content-type')).toMatch(/^text\/javascript/);
    const css = await fetch(new URL('static/style.css', base));
    expect(css.status).toBe(200);
    for (const path of ['static/../package.json', 'static/%2e%2e/index.js', 'static/page/main.ts', 'nope']) {
      expect((await fetch(new URL(path, base))).status).toBe(404);
    }
    expect((await fetch(base, { method: 'POST', body: 'x' })).status).toBe(405);
    expect(await (await fetch(new URL('healthz', base))).text()).toBe('ok\n');
  });

  it('answers /healthz 503 with what is wrong while the health option reports a problem', async () => {
    let problems: string[] = ['the database has been unreachable for 45 s.'];
    const plugin = createWebChatPlugin({
      cookieSecret: COOKIE_SECRET,
      config: { port: 0 },
      health: () => problems,
    });
    const host = new FakeHost();
    await plugin.start(host.context(plugin));
    try {
      const sick = await fetch(new URL('healthz', plugin.address()));
      expect(sick.status).toBe(503);
      expect(await sick.text()).toBe('unhealthy: the database has been unreachable for 45 s.\n');
      problems = [];
      const well = await fetch(new URL('healthz', plugin.address()));
      expect([well.status, await well.text()]).toEqual([200, 'ok\n']);
    } finally {
      await plugin.stop();
    }
  });
});

describe('web chat acknowledgements', () => {
  it('echoes a message only once the runtime has taken it, and tells the sender when it did not', async () => {
    const host = new FakeHost();
    const plugin = createWebChatPlugin({
      cookieSecret: COOKIE_SECRET,
      adminToken: ADMIN_TOKEN,
      config: { port: 0 },
    });
    const ctx = host.context(plugin);
    const gates: (() => void)[] = [];
    let refuse = false;
    await plugin.start({
      ...ctx,
      receive: async (message) => {
        await new Promise<void>((resolve) => gates.push(resolve));
        if (refuse) throw new ColloquyError('ABORTED', 'The runtime is shutting down.');
        await ctx.receive(message);
      },
    });
    running.push({ plugin, host, base: plugin.address(), stop: () => plugin.stop() });
    const c = await client(plugin.address());
    c.send({ type: 'message', text: 'first', clientId: 'a1' });
    await waitUntil(() => gates.length === 1, 'the message reached ctx.receive');
    // A malformed frame is answered at once, outside the socket's frame queue: its error comes after
    // anything the server sent before it called ctx.receive (one ordered connection).
    const errorsBefore = c.all('error').length;
    c.sendRaw('not json');
    await c.next('error', () => c.all('error').length > errorsBefore);
    expect(c.frames.some((f) => f.type === 'message' && f.clientId === 'a1')).toBe(false);
    gates[0]!();
    await c.next('message', (f) => f.clientId === 'a1');

    refuse = true;
    c.send({ type: 'message', text: 'second', clientId: 'a2' });
    await waitUntil(() => gates.length === 2, 'the second message reached ctx.receive');
    gates[1]!();
    const error = await c.next('error', (f) => f.clientId === 'a2');
    expect(error).toMatchObject({ code: 'unavailable' });
    expect(String(error.message)).toContain('send it again');
    expect(c.frames.some((f) => f.type === 'message' && f.clientId === 'a2')).toBe(false);
  });

  it('tells the sender to try later, not in a moment, when the store refused the message for a full disk', async () => {
    const host = new FakeHost();
    const plugin = createWebChatPlugin({ cookieSecret: COOKIE_SECRET, config: { port: 0 } });
    await plugin.start({
      ...host.context(plugin),
      receive: async () => {
        throw new ColloquyError('STORE_ERROR', 'The disk holding the Colloquy store is full.', {
          reason: 'disk-full',
        });
      },
    });
    running.push({ plugin, host, base: plugin.address(), stop: () => plugin.stop() });
    const c = await client(plugin.address());
    c.send({ type: 'message', text: 'hello', clientId: 'd1' });
    const error = await c.next('error', (f) => f.clientId === 'd1');
    expect(error).toMatchObject({ code: 'unavailable' });
    expect(String(error.message)).toBe(
      'The assistant cannot take new messages right now: its storage is full, and its owner has to make room. Try again later.',
    );
    expect(String(error.message)).not.toContain('disk holding');
    expect(c.frames.some((f) => f.type === 'message' && f.clientId === 'd1')).toBe(false);
  });

  it('refuses messages with an explicit error once told to stop receiving, and still delivers replies', async () => {
    const { base, host, plugin } = await start();
    const c = await client(base);
    await plugin.stopReceiving!();
    c.send({ type: 'message', text: 'too late', clientId: 'z1' });
    const error = await c.next('error', (f) => f.clientId === 'z1');
    expect(error).toMatchObject({ code: 'unavailable' });
    expect(host.received).toHaveLength(0);
  });
});

async function waitUntil(check: () => boolean, what: string, timeoutMs = 3000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`not within ${timeoutMs} ms: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

describe('web chat direct messages', () => {
  it('hands a visitor message to the runtime and streams the reply back', async () => {
    const { base, host } = await start();
    const c = await client(base);
    const ready = await c.next('ready');
    expect(ready).toMatchObject({ chat: { type: 'direct' }, admin: false, maxMessageChars: 8000 });

    c.send({ type: 'message', text: 'hello there', clientId: 'c1' });
    const echoed = await c.next('message', (f) => f.clientId === 'c1');
    expect(echoed.message).toMatchObject({ role: 'user', text: 'hello there', sender: ready.you });

    const reply = await c.next('message', (f) => f.message.role === 'assistant');
    expect(reply.message.text).toBe('You said: hello there');
    const started = await c.next('run', (f) => f.state === 'started');
    expect(reply.message.runId).toBe(started.runId);
    const streamed = c
      .all('delta')
      .map((d) => d.text)
      .join('');
    expect(streamed).toBe('You said: hello there');
    await c.next('run', (f) => f.state === 'ended' && f.status === 'done');

    const [inbound] = host.received;
    expect(inbound).toMatchObject({
      channel: 'webchat',
      accountId: 'default',
      chat: { type: 'direct', id: ready.chat.id },
      sender: { id: ready.chat.id },
      text: 'hello there',
      mentionsBot: true,
      messageId: echoed.message.id,
    });
    expect(ready.chat.id).toMatch(/^v_/);
    expect(ready.you.id).not.toContain(ready.chat.id.slice(2));
  });

  it('keeps the visitor identity and shows the history on reconnect', async () => {
    const { base, host } = await start();
    const first = await client(base);
    first.send({ type: 'message', text: 'remember me' });
    await first.next('message', (f) => f.message.role === 'assistant');
    await host.idle();
    first.close();

    const again = await client(base, { cookie: first.cookie });
    expect((await again.next('ready')).chat.id).toBe((await first.next('ready')).chat.id);
    const history = await again.next('history');
    expect(history.messages.map((m) => [m.role, m.text])).toEqual([
      ['user', 'remember me'],
      ['assistant', 'You said: remember me'],
    ]);
  });

  it('loads the history from the gateway transcript after a restart', async () => {
    const host = new FakeHost();
    const one = await start({}, {}, host);
    const c = await client(one.base);
    c.send({ type: 'message', text: 'before restart' });
    await c.next('message', (f) => f.message.role === 'assistant');
    await one.stop();
    running = running.filter((s) => s !== one);

    const two = await start({}, {}, host);
    const back = await client(two.base, { cookie: c.cookie });
    const history = await back.next('history');
    expect(history.messages.map((m) => m.text)).toEqual(['before restart', 'You said: before restart']);
    expect(history.messages[0]!.sender?.id).toBe((await back.next('ready')).you.id);
  });

  it('gives each browser its own chat', async () => {
    const { base } = await start();
    const a = await client(base);
    const b = await client(base);
    expect((await a.next('ready')).chat.id).not.toBe((await b.next('ready')).chat.id);
    a.send({ type: 'message', text: 'secret of a' });
    await a.next('message', (f) => f.message.role === 'assistant');
    b.send({ type: 'ping' });
    await b.next('pong');
    expect(b.all('message')).toEqual([]);
    expect(b.all('delta')).toEqual([]);
  });

  it('names guests apart by 8 hex digits of their public id', async () => {
    const { base } = await start();
    const a = (await (await client(base)).next('ready')).you;
    const b = (await (await client(base)).next('ready')).you;
    expect(a.name).toMatch(/^Guest [0-9a-f]{8}$/);
    expect(a.name).toBe(`Guest ${a.id.slice(2, 10)}`);
    expect(b.name).not.toBe(a.name);
  });

  it('sends typing to every tab of the visitor, and to no other visitor', async () => {
    const { base, plugin } = await start();
    const first = await client(base);
    const { chat } = await first.next('ready');
    const second = await client(base, { cookie: first.cookie });
    expect((await second.next('ready')).chat).toEqual(chat);
    const stranger = await client(base);
    await stranger.next('ready');
    await plugin.sendTyping!({ channel: 'webchat', to: chat.id, accountId: 'default' });
    await Promise.all([first, second].map((tab) => tab.next('typing', (f) => f.role === 'assistant')));
    // Frames reach a socket in the order they are sent: a message sent to the stranger after the
    // typing arrives after where a stray typing frame would have been.
    const strangerChat = (await stranger.next('ready')).chat;
    await plugin.send({ channel: 'webchat', to: strangerChat.id, accountId: 'default' }, { text: 'marker' });
    await stranger.next('message', (f) => f.message.text === 'marker');
    expect(stranger.all('typing')).toEqual([]);
  });

  it('does not stream runs of a session whose send policy is deny', async () => {
    const { base, host, plugin } = await start();
    const c = await client(base);
    const { chat } = await c.next('ready');
    host.addSession({
      key: 'agent:main:webchat:dm:x',
      sendPolicy: 'deny',
      deliveryContext: { channel: 'webchat', to: chat.id, accountId: 'default' },
    });
    host.emit({ type: 'run.started', runId: 'r1', sessionKey: 'agent:main:webchat:dm:x' });
    host.emit({ type: 'run.delta', runId: 'r1', sessionKey: 'agent:main:webchat:dm:x', text: 'hidden' });
    await plugin.sendTyping!({ channel: 'webchat', to: chat.id, accountId: 'default' });
    await c.next('typing');
    expect(c.all('delta')).toEqual([]);
  });
});

describe('web chat edits and deletes', () => {
  it('replaces and removes a sent message in every tab of the chat and in its history', async () => {
    const { base, plugin } = await start();
    const first = await client(base);
    const { chat } = await first.next('ready');
    const second = await client(base, { cookie: first.cookie });
    const to = { channel: 'webchat', to: chat.id, accountId: 'default' };
    const { messageId } = await plugin.send(to, {
      text: '2 helpers working: research (5 s)',
      format: 'plain',
    });
    const { messageId: kept } = await plugin.send(to, { text: 'a reply that stays' });

    await plugin.editMessage?.(to, messageId, { text: '2 helpers finished in 9 s', format: 'plain' });
    for (const tab of [first, second]) {
      const edit = await tab.next('edit');
      expect(edit.message).toMatchObject({
        id: messageId,
        role: 'assistant',
        text: '2 helpers finished in 9 s',
      });
      expect(edit.message.format).toBe('plain');
    }
    const reopened = await client(base, { cookie: first.cookie });
    const history = reopened.all('history').at(-1)!;
    expect(history.messages.map((m) => m.text)).toEqual(['2 helpers finished in 9 s', 'a reply that stays']);

    await plugin.deleteMessage?.(to, messageId);
    expect((await first.next('delete')).id).toBe(messageId);
    const after = await client(base, { cookie: first.cookie });
    expect(
      after
        .all('history')
        .at(-1)!
        .messages.map((m) => m.id),
    ).toEqual([kept]);
    await expect(plugin.editMessage?.(to, messageId, { text: 'too late' })).rejects.toMatchObject({
      code: 'CHANNEL_ERROR',
    });
  });
});

describe('web chat rooms', () => {
  it('shares room messages and answers only when the assistant is addressed', async () => {
    const { base, host } = await start({ assistantName: 'Ada' });
    const alice = await client(base, { room: 'Lobby' });
    const bob = await client(base, { room: 'lobby' });
    expect((await alice.next('ready')).chat).toEqual({ type: 'group', id: 'lobby' });
    alice.send({ type: 'profile', name: 'Alice' });
    await alice.next('profile');

    alice.send({ type: 'message', text: 'hi all' });
    const seen = await bob.next('message', (f) => f.message.text === 'hi all');
    expect(seen.message.sender?.name).toBe('Alice');
    await host.idle();
    expect(host.received.at(-1)).toMatchObject({ chat: { type: 'group', id: 'lobby' }, mentionsBot: false });

    alice.send({ type: 'message', text: '@ada what time is it?' });
    const reply = await bob.next('message', (f) => f.message.role === 'assistant');
    expect(reply.message.text).toBe('You said: @ada what time is it?');
    expect(bob.all('delta').length).toBeGreaterThan(0);
    expect(host.received.at(-1)?.mentionsBot).toBe(true);
    expect(alice.all('message').filter((f) => f.message.role === 'assistant')).toHaveLength(1);
  });

  it('shows who is typing to the others in the room', async () => {
    const { base } = await start();
    const alice = await client(base, { room: 'team' });
    const bob = await client(base, { room: 'team' });
    alice.send({ type: 'profile', name: 'Alice' });
    await alice.next('profile');
    alice.send({ type: 'typing' });
    const typing = await bob.next('typing', (f) => f.role === 'user');
    expect(typing).toMatchObject({ role: 'user', sender: { name: 'Alice' } });
    alice.send({ type: 'ping' });
    await alice.next('pong');
    expect(alice.all('typing')).toEqual([]);
  });

  it('refuses an invalid room name', async () => {
    const { base } = await start();
    await expect(TestClient.connect(base, { room: '../etc' })).rejects.toThrow('HTTP 400');
  });
});

describe('web chat bad input', () => {
  it('answers invalid JSON with an error frame and keeps the connection', async () => {
    const { base } = await start();
    const c = await client(base);
    c.sendRaw('{not json');
    expect(await c.next('error')).toMatchObject({ code: 'invalid_json' });
    c.sendRaw(Buffer.from([1, 2, 3]), true);
    await c.next('error', (f) => f.code === 'invalid_frame');
    c.send({ type: 'launch-missiles' });
    expect(c.all('error')).toHaveLength(2);
    c.send({ type: 'ping' });
    await c.next('pong');
    expect(c.all('error')).toHaveLength(3);
  });

  it('refuses an oversized message with too_long and does not pass it on', async () => {
    const { base, host } = await start({ maxMessageChars: 100 });
    const c = await client(base);
    c.send({ type: 'message', text: 'x'.repeat(101), clientId: 'big' });
    expect(await c.next('error')).toMatchObject({ code: 'too_long', clientId: 'big' });
    c.send({ type: 'message', text: 'small' });
    await c.next('message', (f) => f.message.role === 'assistant');
    expect(host.received.map((m) => m.text)).toEqual(['small']);
  });

  it('closes a socket that sends a frame over the size cap and keeps serving others', async () => {
    const { base } = await start({ maxMessageChars: 100 });
    const c = await client(base);
    c.sendRaw(JSON.stringify({ type: 'message', text: 'y'.repeat(200_000) }));
    expect(await c.closed()).toBe(1009);
    const other = await client(base);
    other.send({ type: 'message', text: 'still here?' });
    await other.next('message', (f) => f.message.role === 'assistant');
    expect((await fetch(base)).status).toBe(200);
  });

  it('rate-limits a visitor who sends too fast', async () => {
    const { base, host } = await start(
      { rateLimit: { burst: 3, perSecond: 0.1 } },
      { reply: () => undefined },
    );
    const c = await client(base);
    for (let i = 0; i < 5; i += 1) c.send({ type: 'message', text: `m${i}`, clientId: `c${i}` });
    await c.next('error', (f) => f.clientId === 'c4');
    expect(c.all('error').map((e) => [e.code, e.clientId])).toEqual([
      ['rate_limited', 'c3'],
      ['rate_limited', 'c4'],
    ]);
    await host.idle();
    expect(host.received.map((m) => m.text)).toEqual(['m0', 'm1', 'm2']);
  });

  it('answers a frame flood with one notice, not one error per frame, and recovers', async () => {
    const { base } = await start();
    const c = await client(base);
    for (let i = 0; i < 300; i += 1) c.send({ type: 'ping' });
    await c.next('error', (f) => f.code === 'rate_limited');
    // The scenario: the frame budget refills at 20 frames a second, so after two refill periods the
    // next ping has a token. Frames are taken in order, so its pong proves the server went through
    // the whole flood first.
    await new Promise((resolve) => setTimeout(resolve, 2 * (1000 / 20)));
    const before = c.all('pong').length;
    c.send({ type: 'ping' });
    await c.next('pong', () => c.all('pong').length > before);
    expect(c.all('pong').length).toBeLessThanOrEqual(71);
    expect(c.all('error')).toHaveLength(1);
  });

  it('passes script injection on as inert text', async () => {
    const { base, host } = await start();
    const c = await client(base);
    const evil = '<img src=x onerror="alert(1)"><script>alert(2)</script>';
    c.send({ type: 'message', text: evil });
    const echoed = await c.next('message', (f) => f.message.role === 'user');
    expect(echoed.message.text).toBe(evil);
    await c.next('message', (f) => f.message.role === 'assistant');
    expect(host.received[0]?.text).toBe(evil);
  });

  it('refuses a WebSocket from another origin and accepts its own', async () => {
    const { base } = await start();
    await expect(TestClient.connect(base, { origin: 'http://evil.test' })).rejects.toThrow('HTTP 403');
    const own = await client(base, { origin: base.replace(/\/$/, '') });
    expect((await own.next('ready')).chat.type).toBe('direct');
  });

  it('refuses a WebSocket for a host name it does not serve (DNS rebinding)', async () => {
    const { base } = await start();
    const port = new URL(base).port;
    await expect(
      TestClient.connect(base, {
        headers: { host: `rebind.evil.test:${port}` },
        origin: `http://rebind.evil.test:${port}`,
      }),
    ).rejects.toThrow('HTTP 403');
    const local = await client(base, { headers: { host: `localhost:${port}` } });
    expect((await local.next('ready')).chat.type).toBe('direct');
  });

  it('issues a new identity when the visitor cookie is tampered with', async () => {
    const { base } = await start();
    const c = await client(base);
    const { chat } = await c.next('ready');
    const forged = c.cookie.replace(/v_[\w-]{20}/, `v_${'A'.repeat(20)}`);
    const other = await client(base, { cookie: forged });
    const ready = await other.next('ready');
    expect(ready.chat.id).not.toBe(chat.id);
    expect(ready.chat.id).not.toBe(`v_${'A'.repeat(20)}`);
    expect(other.cookie).not.toBe(forged);
  });
});

/** A client signed in as the owner through `?admin=`, with the cookie that login sets. */
async function ownerClient(base: string) {
  const login = await fetch(new URL(`?admin=${ADMIN_TOKEN}`, base), { redirect: 'manual' });
  const cookie = login.headers
    .getSetCookie()
    .map((c) => c.split(';')[0])
    .join('; ');
  return client(base, { cookie });
}

describe('web chat owner access', () => {
  it('refuses the session API without the admin token', async () => {
    const { base } = await start();
    const url = new URL('api/sessions', base);
    const anonymous = await fetch(url);
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get('www-authenticate')).toMatch(/^Bearer/);
    expect((await fetch(url, { headers: { authorization: 'Bearer wrong-token' } })).status).toBe(401);
    const owner = await fetch(url, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    expect(owner.status).toBe(200);
    expect(await owner.json()).toMatchObject({ total: 0, sessions: [] });
  });

  it('refuses a wrong ?admin= login and turns a right one into a cookie', async () => {
    const { base } = await start();
    const wrong = await fetch(new URL('?admin=nope', base), { redirect: 'manual' });
    expect(wrong.status).toBe(401);
    expect(wrong.headers.get('set-cookie') ?? '').not.toContain('colloquy_admin');
    const right = await fetch(new URL(`?room=lobby&admin=${ADMIN_TOKEN}`, base), { redirect: 'manual' });
    expect(right.status).toBe(303);
    expect(right.headers.get('location')).toBe('./?room=lobby');
    expect(right.headers.getSetCookie().find((c) => c.startsWith('colloquy_admin='))).toMatch(
      /HttpOnly; SameSite=Strict/,
    );
  });

  it('keeps the session panel from visitors', async () => {
    const { base } = await start();
    const c = await client(base);
    expect((await c.next('ready')).admin).toBe(false);
    c.send({ type: 'sessions.refresh' });
    expect(await c.next('error')).toMatchObject({ code: 'forbidden' });
    expect(c.all('sessions')).toEqual([]);
    c.send({ type: 'transcript', key: 'agent:main:main' });
    expect(await c.next('error', (f) => f.message.startsWith('Transcripts'))).toMatchObject({
      code: 'forbidden',
    });
    expect(c.all('transcript')).toEqual([]);
  });

  it('marks messages from the signed-in admin as the owner, and nobody else', async () => {
    const { base, host } = await start();
    const owner = await ownerClient(base);
    await owner.next('ready');
    owner.send({ type: 'message', text: '/send off' });
    const visitor = await client(base);
    await visitor.next('ready');
    visitor.send({ type: 'message', text: '/send off' });
    await visitor.next('message', (f) => f.message.role === 'user');
    await owner.next('message', (f) => f.message.role === 'user');
    const marks = host.received.map((m) => m.sender.isOwner === true).sort();
    expect(marks).toEqual([false, true]);
  });

  it('leaves out of the panel a visitor whose session no run ever started (slash commands only)', async () => {
    const { base, host } = await start();
    host.addSession({ key: 'agent:main:webchat:dm:v_commands', kind: 'dm', channel: 'webchat' });
    host.addSession({
      key: 'agent:main:webchat:dm:v_talker',
      kind: 'dm',
      channel: 'webchat',
      status: 'done',
    });
    const owner = await ownerClient(base);
    await owner.next('ready');
    const panel = await owner.next('sessions');
    expect(panel.sessions.map((row) => row.key)).toEqual(['agent:main:webchat:dm:v_talker']);
    expect(panel.total).toBe(1);
  });

  it('shows the owner a session tree that updates as runs start and end', async () => {
    const { base, host } = await start();
    const owner = await ownerClient(base);
    expect((await owner.next('ready')).admin).toBe(true);
    await owner.next('sessions');

    const visitor = await client(base);
    visitor.send({ type: 'message', text: 'spawn something' });
    await visitor.next('message', (f) => f.message.role === 'assistant');
    const parent = [...host.sessions.keys()][0]!;
    host.addSession({
      key: 'agent:main:subagent:1234abcd-0000',
      kind: 'subagent',
      spawnedBy: parent,
      spawnDepth: 1,
      status: 'running',
      startedAt: Date.now(),
    });
    host.emit({ type: 'run.started', runId: 'sub-1', sessionKey: 'agent:main:subagent:1234abcd-0000' });
    const live = await owner.next('sessions', (f) => f.sessions.some((s) => s.status === 'running'));
    expect(live.sessions.find((s) => s.kind === 'subagent')).toMatchObject({
      spawnedBy: parent,
      spawnDepth: 1,
    });

    host.sessions.get('agent:main:subagent:1234abcd-0000')!.status = 'done';
    host.emit({
      type: 'run.ended',
      runId: 'sub-1',
      sessionKey: 'agent:main:subagent:1234abcd-0000',
      status: 'done',
    });
    const after = await owner.next('sessions', (f) =>
      f.sessions.some((s) => s.kind === 'subagent' && s.status === 'done'),
    );
    expect(after.sessions.find((s) => s.key === parent)).toMatchObject({
      kind: 'dm',
      channel: 'webchat',
      status: 'done',
    });
    expect(after.sessions.find((s) => s.key === parent)?.totalTokens).toBeGreaterThan(0);
  });
});

describe('web chat plugin lifecycle', () => {
  it('refuses to send before start and to an unknown target', async () => {
    const plugin = createWebChatPlugin({ cookieSecret: COOKIE_SECRET, config: { port: 0 } });
    await expect(
      plugin.send({ channel: 'webchat', to: 'lobby', accountId: 'default' }, { text: 'x' }),
    ).rejects.toMatchObject({
      code: 'CHANNEL_ERROR',
    });
    const { plugin: started } = await start();
    await expect(
      started.send({ channel: 'webchat', to: '../../x', accountId: 'default' }, { text: 'x' }),
    ).rejects.toMatchObject({
      code: 'CHANNEL_ERROR',
    });
    const sent = await started.send(
      { channel: 'webchat', to: 'lobby', accountId: 'default' },
      { text: 'to nobody' },
    );
    expect(sent.messageIds).toEqual([sent.messageId]);
  });

  it('refuses a second start, stops idempotently and reports a busy port', async () => {
    const s = await start();
    const host = new FakeHost();
    await expect(s.plugin.start(host.context(s.plugin))).rejects.toMatchObject({ code: 'CONFLICT' });
    const port = Number(new URL(s.base).port);
    const clash = createWebChatPlugin({ cookieSecret: COOKIE_SECRET, config: { port } });
    await expect(clash.start(host.context(clash))).rejects.toMatchObject({ code: 'CHANNEL_ERROR' });
    expect(clash.status?.().state).toBe('error');
    expect(s.plugin.status?.()).toMatchObject({ state: 'connected', detail: s.base });
    await s.plugin.stop();
    await s.plugin.stop();
    expect(s.plugin.status?.().state).toBe('disconnected');
    await expect(fetch(s.base)).rejects.toThrow();
    running = running.filter((r) => r !== s);
  });

  it('closes open sockets on stop and when the runtime aborts', async () => {
    const s = await start();
    const c = await client(s.base);
    s.host.controller.abort();
    expect(await c.closed()).toBe(1001);
    expect(() => s.plugin.address()).toThrow(/not running/);
    running = running.filter((r) => r !== s);
  });
});
