// End to end: the real runtime, the scripted model, the WhatsApp plugin and the fake Baileys socket.

import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { resolveConfig } from '@colloquy/core';
import { MemoryStore } from '@colloquy/core/store';
import { createRuntime, type Runtime } from '@colloquy/runtime';
import { createScriptedModel, lastUserText, type ScriptedModel } from '@colloquy/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { nodeStateFs, type StateFs } from '../src/atomic-file.js';
import { useAtomicAuthState } from '../src/auth-state.js';
import { createWhatsAppPlugin, type WhatsAppPlugin, type WhatsAppPluginOptions } from '../src/plugin.js';
import { dm, FakeWhatsApp, groupMessage } from './fake-socket.js';
import { eventually, pastAnyReconnect } from './test-context.js';

const ALICE = '15552220000@s.whatsapp.net';
const ALICE_LID = '88112233@lid';
const OWNER = '15550001111@s.whatsapp.net';
const GROUP = '120363041234567890@g.us';

interface Bot {
  runtime: Runtime;
  plugin: WhatsAppPlugin;
  fake: FakeWhatsApp;
  model: ScriptedModel;
  store: MemoryStore;
  stateDir: string;
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** The model answers `echo: <last user text>`; "long" gets a 9,000-character answer. */
function echoModel(delayMs = 0): ScriptedModel {
  return createScriptedModel((request) => {
    const text = lastUserText(request) ?? '';
    if (text.includes('long')) {
      const paragraphs = Array.from(
        { length: 30 },
        (_, i) => `Part ${i}: ${'lorem ipsum dolor sit amet '.repeat(11)}`,
      );
      return { text: paragraphs.join('\n\n'), delayMs };
    }
    return { text: `echo: ${text}`, delayMs };
  });
}

const RECONNECT = { initialDelayMs: 5, maxDelayMs: 20 };

async function startBot(options: Partial<WhatsAppPluginOptions> = {}, model = echoModel()): Promise<Bot> {
  const fake = new FakeWhatsApp();
  const stateDir = await mkdtemp(join(tmpdir(), 'wa-e2e-'));
  cleanups.push(() => rm(stateDir, { recursive: true, force: true }));
  const auth = await useAtomicAuthState(join(stateDir, 'auth'));
  auth.state.creds.me = fake.account;
  await auth.saveCreds();

  const plugin = createWhatsAppPlugin({
    stateDir,
    makeSocket: fake.makeSocket,
    qrOutput: false,
    reconnect: RECONNECT,
    ...options,
    config: { dmPolicy: 'open', ...options.config },
  });
  const store = new MemoryStore();
  const runtime = createRuntime({
    config: resolveConfig({ agents: { defaults: { model: 'scripted/echo' } } }),
    store,
    plugins: [plugin],
    models: new Map([['scripted/echo', { provider: model, modelId: 'echo' }]]),
    typingIntervalMs: 20,
  });
  cleanups.push(() => runtime.shutdown({ drainMs: 0 }));
  await runtime.start();
  await eventually(() => plugin.status().state === 'connected');
  return { runtime, plugin, fake, model, store, stateDir };
}

const whatsappSessions = async (store: MemoryStore) =>
  (await store.listSessions({})).filter((s) => s.key.includes(':whatsapp:'));

describe('WhatsApp end to end through the runtime', () => {
  it('answers a direct message in its own session', async () => {
    const { fake, model, store } = await startBot();
    fake.current.deliver([dm(ALICE, 'hello bot')]);
    const reply = await eventually(() => fake.sent[0]);
    expect(reply).toMatchObject({ jid: ALICE, text: 'echo: hello bot' });
    expect(model.callCount).toBe(1);
    expect((await whatsappSessions(store)).map((s) => s.key)).toEqual(['agent:main:whatsapp:dm:15552220000']);
  });

  it('keeps one session for the LID and the phone JID of the same person', async () => {
    const { fake, model, store } = await startBot();
    fake.current.emit('lid-mapping.update', { lid: ALICE_LID, pn: ALICE });
    fake.current.deliver([dm(ALICE_LID, 'first via lid')]);
    await eventually(() => fake.sent.length === 1);
    fake.current.deliver([dm(ALICE, 'second via phone')]);
    await eventually(() => fake.sent.length === 2);
    expect((await whatsappSessions(store)).map((s) => s.key)).toEqual(['agent:main:whatsapp:dm:15552220000']);
    const history = model.lastRequest?.messages.map((m) => (typeof m.content === 'string' ? m.content : ''));
    expect(history?.join('\n')).toContain('first via lid');
    expect(fake.sent.map((s) => s.jid)).toEqual([ALICE_LID, ALICE]);
  });

  it('keeps one session when only Baileys 7 LID store knows the LID of an allowlisted number', async () => {
    const { fake, store } = await startBot({
      config: { dmPolicy: 'allowlist', allowFrom: ['+1 555 222 0000'] },
    });
    fake.lidToPn.set(ALICE_LID, ALICE);
    fake.current.deliver([dm(ALICE_LID, 'first via lid')]);
    await eventually(() => fake.sent.length === 1);
    fake.current.deliver([dm(ALICE, 'second via phone')]);
    await eventually(() => fake.sent.length === 2);
    expect((await whatsappSessions(store)).map((s) => s.key)).toEqual(['agent:main:whatsapp:dm:15552220000']);
  });

  it('ignores a group message without a mention and answers a mention with a quote', async () => {
    const { fake, model } = await startBot();
    fake.current.deliver([groupMessage(GROUP, ALICE, 'people talking')]);
    // The plugin takes a connection's messages in order: once the mention after it is answered, a
    // turn the first one started would have been queued, and answered, before it.
    const mention = groupMessage(GROUP, ALICE, '@15550001111 what is up?', { mentions: [OWNER] });
    fake.current.deliver([mention]);
    const reply = await eventually(() => fake.sent[0]);
    expect(fake.sent).toHaveLength(1);
    expect(reply.jid).toBe(GROUP);
    expect(reply.text).toBe('echo: @15550001111 what is up?');
    expect(reply.quoted?.key).toEqual(mention.key);
    expect(model.callCount).toBe(1);
  });

  it('ignores the echo of its own reply', async () => {
    const { fake, model } = await startBot();
    fake.echoSends = true;
    fake.current.deliver([dm(ALICE, 'ping')]);
    await eventually(() => fake.sent.length === 1);
    // The echo came in before this message: once it is answered, the echo was dealt with.
    fake.current.deliver([dm(ALICE, 'pong')]);
    await eventually(() => fake.sent.length === 2);
    expect(model.callCount).toBe(2);
    expect(fake.sent.map((s) => s.text)).toEqual(['echo: ping', 'echo: pong']);
  });

  it('chunks a long reply into readable messages', async () => {
    const { fake } = await startBot();
    fake.current.deliver([dm(ALICE, 'tell me something long')]);
    // The chunks go out in order: the one with the last part ends the reply.
    await eventually(() => fake.sent.some((s) => s.text.includes('Part 29:')));
    expect(fake.sent.length).toBe(3);
    for (const s of fake.sent) expect(s.text.length).toBeLessThanOrEqual(4000);
    expect(fake.sent[0]?.text.startsWith('Part 0:')).toBe(true);
    expect(fake.sent.at(-1)?.text).toContain('Part 29:');
  });

  it('shows composing while the model works and pauses after the reply', async () => {
    const { fake } = await startBot({}, echoModel(120));
    fake.current.deliver([dm(ALICE, 'take your time')]);
    await eventually(() => fake.sent.length === 1);
    expect(fake.presences[0]).toEqual({ type: 'composing', jid: ALICE });
    await eventually(() => fake.presences.at(-1)?.type === 'paused');
  });

  it('reconnects after a restartable close and keeps answering', async () => {
    const { fake, plugin } = await startBot();
    fake.current.drop(428, 'Connection Closed');
    await fake.waitForSockets(2);
    await eventually(() => plugin.status().state === 'connected');
    fake.current.deliver([dm(ALICE, 'still there?')]);
    await eventually(() => fake.sent.length === 1);
    expect(fake.sent[0]?.text).toBe('echo: still there?');
  });

  it('stops on loggedOut with a clear message in its status', async () => {
    const { fake, plugin, stateDir } = await startBot();
    fake.current.drop(401, 'Connection Failure');
    await eventually(() => plugin.status().state !== 'connected');
    await pastAnyReconnect(RECONNECT);
    expect(fake.sockets).toHaveLength(1);
    const status = plugin.status();
    expect(status.state).toBe('logged-out');
    expect(status.detail).toContain(`delete ${join(stateDir, 'auth')}`);
    expect(status.detail).toContain('scan the new QR code');
  });

  it('leaves the previous credentials readable when a creds write is interrupted mid-conversation', async () => {
    let armed = false;
    let failed = false;
    const fs: StateFs = {
      ...nodeStateFs,
      async open(path, flags) {
        const handle = await nodeStateFs.open(path, flags);
        if (!armed || flags !== 'w' || !path.endsWith('.tmp') || !path.includes('creds.json')) return handle;
        armed = false;
        return {
          writeFile: async (data: string) => {
            await handle.writeFile(data.slice(0, data.length >> 1));
            failed = true;
            throw new Error('ENOSPC: no space left on device');
          },
          sync: () => handle.sync(),
          close: () => handle.close(),
        };
      },
    };
    const { fake, stateDir } = await startBot({ fs });
    armed = true;
    fake.current.emit('creds.update', { me: { ...fake.account, name: 'Half-written' } });
    fake.current.deliver([dm(ALICE, 'are you ok?')]);
    await eventually(() => fake.sent.length === 1);
    expect(fake.sent[0]?.text).toBe('echo: are you ok?');
    await eventually(() => failed);
    // The failed write cleans its temp file up; the creds file itself was never touched.
    await eventually(async () => !(await readdir(join(stateDir, 'auth'))).some((n) => n.endsWith('.tmp')));
    const reloaded = await useAtomicAuthState(join(stateDir, 'auth'));
    expect(reloaded.state.creds.me?.name).toBe('Owner');
  });
});
