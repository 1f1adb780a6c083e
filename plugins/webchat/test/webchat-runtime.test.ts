import { subagentSessionKey } from '@colloquy/core/internal';
import { MemoryStore, type Store } from '@colloquy/core/store';
import { afterEach, describe, expect, it } from 'vitest';
import { type RuntimeHost, startRuntimeHost, streamed } from './support/runtime-host.js';
import { ADMIN_TOKEN } from './support/start.js';
import { TestClient } from './support/ws-client.js';

const hosts: RuntimeHost[] = [];
const clients: TestClient[] = [];

async function boot(...args: Parameters<typeof startRuntimeHost>): Promise<RuntimeHost> {
  const host = await startRuntimeHost(...args);
  hosts.push(host);
  return host;
}

async function client(base: string, options?: Parameters<typeof TestClient.connect>[1]): Promise<TestClient> {
  const c = await TestClient.connect(base, options);
  clients.push(c);
  await c.next('history');
  return c;
}

afterEach(async () => {
  for (const c of clients.splice(0)) c.close();
  for (const h of hosts.splice(0)) await h.stop();
});

describe('web chat on the real runtime', () => {
  it('streams a scripted model reply into the visitor chat and delivers the final message', async () => {
    const { base, runtime } = await boot((text) => streamed(`Hello! You wrote: ${text}`));
    const c = await client(base);
    const { chat } = await c.next('ready');
    c.send({ type: 'message', text: 'good morning', clientId: 'm1' });
    const reply = await c.next('message', (f) => f.message.role === 'assistant');
    expect(reply.message.text).toBe('Hello! You wrote: good morning');
    const started = await c.next('run', (f) => f.state === 'started');
    expect(reply.message.runId).toBe(started.runId);
    expect(
      c
        .all('delta')
        .map((d) => d.text)
        .join(''),
    ).toBe('Hello! You wrote: good morning');
    await c.next('run', (f) => f.state === 'ended' && f.status === 'done');

    const { sessions } = await runtime.gateway.call('sessions.list', {});
    const session = sessions.find((s) => s.deliveryContext?.to === chat.id);
    expect(session).toMatchObject({
      kind: 'dm',
      deliveryContext: { channel: 'webchat', accountId: 'default' },
    });
  });

  it('shows the transcript as history after the app restarts', async () => {
    const store = keptOpen(new MemoryStore());
    const first = await boot(undefined, {}, store);
    const c = await client(first.base);
    c.send({ type: 'message', text: 'note: the door is blue' });
    await c.next('message', (f) => f.message.role === 'assistant');
    await c.next('run', (f) => f.state === 'ended');
    c.close();
    const port = Number(new URL(first.base).port);
    await first.runtime.shutdown({ drainMs: 200 }).catch(() => {});
    hosts.splice(hosts.indexOf(first), 1);

    // The store's data outlives the first runtime; a second runtime over it is a restart.
    const second = await boot(undefined, { port }, store);
    const back = await client(second.base, { cookie: c.cookie });
    const history = await back.next('history');
    expect(history.messages.map((m) => [m.role, m.text])).toEqual([
      ['user', 'note: the door is blue'],
      ['assistant', 'You said: note: the door is blue'],
    ]);
    expect(history.messages[0]?.sender?.id).toBe((await back.next('ready')).you.id);
  });

  it('answers in a room only when the assistant is mentioned', async () => {
    const { base } = await boot();
    const alice = await client(base, { room: 'lobby' });
    const bob = await client(base, { room: 'lobby' });
    alice.send({ type: 'message', text: 'just chatting' });
    await bob.next('message', (f) => f.message.text === 'just chatting');
    bob.send({ type: 'message', text: '@bot hello' });
    const reply = await alice.next('message', (f) => f.message.role === 'assistant');
    expect(reply.message.text).toBe('You said: @bot hello');
    expect(alice.all('message').filter((f) => f.message.role === 'assistant')).toHaveLength(1);
  });

  it('keeps the owner panel live as a sub-agent runs and ends', async () => {
    const { base, runtime } = await boot((text) =>
      text.startsWith('research') ? { text: 'findings', delayMs: 400 } : streamed(`You said: ${text}`),
    );
    const login = await fetch(new URL(`?admin=${ADMIN_TOKEN}`, base), { redirect: 'manual' });
    const cookie = login.headers
      .getSetCookie()
      .map((v) => v.split(';')[0])
      .join('; ');
    const owner = await client(base, { cookie });
    owner.send({ type: 'message', text: 'hi' });
    await owner.next('message', (f) => f.message.role === 'assistant');
    const { chat } = await owner.next('ready');
    const { sessions } = await runtime.gateway.call('sessions.list', {});
    const parent = sessions.find((s) => s.deliveryContext?.to === chat.id)!;

    const childKey = subagentSessionKey('main');
    const { runId } = await runtime.gateway.call('agent', {
      sessionKey: childKey,
      message: 'research the door',
      lane: 'subagent',
      spawnedBy: parent.key,
      session: { label: 'researcher' },
    });
    const running = await owner.next('sessions', (f) =>
      f.sessions.some((s) => s.key === childKey && s.status === 'running'),
    );
    expect(running.sessions.find((s) => s.key === childKey)).toMatchObject({
      spawnedBy: parent.key,
      spawnDepth: 1,
      label: 'researcher',
    });
    await runtime.gateway.call('agent.wait', { runId, timeoutMs: 5000 });
    const done = await owner.next('sessions', (f) =>
      f.sessions.some((s) => s.key === childKey && s.status === 'done'),
    );
    expect(done.sessions.find((s) => s.key === childKey)?.totalTokens).toBeGreaterThan(0);
  });
});

/** The store with `close()` made a no-op, so its data survives a runtime shutdown like a file would. */
function keptOpen(store: Store): Store {
  return new Proxy(store, {
    get(target, property) {
      if (property === 'close') return async () => {};
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}
