import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type ChannelLease, ColloquyError, isColloquyError } from '@colloquy/core';
import { approvePairing } from '@colloquy/core/gateway';
import type { GroupMetadata } from '@whiskeysockets/baileys';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { nodeStateFs, type StateFs } from '../src/atomic-file.js';
import { useAtomicAuthState } from '../src/auth-state.js';
import { createWhatsAppPlugin, type WhatsAppPlugin, type WhatsAppPluginOptions } from '../src/plugin.js';
import { boom, dm, FakeWhatsApp, groupMessage, mediaMessage } from './fake-socket.js';
import {
  createTestContext,
  eventually,
  pastAnyReconnect,
  receivedBefore,
  settle,
  type TestContext,
} from './test-context.js';

const RECONNECT = { initialDelayMs: 5, maxDelayMs: 40 };

const ALICE = '15552220000@s.whatsapp.net';
const ALICE_LID = '88112233@lid';
const GROUP = '120363041234567890@g.us';
const OWNER = '15550001111@s.whatsapp.net';
const OWNER_LID = '99000111@lid';

interface Harness {
  plugin: WhatsAppPlugin;
  fake: FakeWhatsApp;
  t: TestContext;
  stateDir: string;
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'wa-plugin-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

/** Stores credentials of an already linked device, as a previous QR scan would have. */
async function link(stateDir: string, fake: FakeWhatsApp): Promise<void> {
  const auth = await useAtomicAuthState(join(stateDir, 'auth'));
  auth.state.creds.me = fake.account;
  auth.state.creds.registered = true;
  await auth.saveCreds();
}

async function boot(
  options: Partial<WhatsAppPluginOptions> = {},
  setup: { linked?: boolean; fake?: FakeWhatsApp; stateDir?: string } = {},
): Promise<Harness> {
  const fake = setup.fake ?? new FakeWhatsApp();
  const stateDir = setup.stateDir ?? (await tempDir());
  if (setup.linked !== false) await link(stateDir, fake);
  const plugin = createWhatsAppPlugin({
    stateDir,
    makeSocket: fake.makeSocket,
    qrOutput: false,
    reconnect: RECONNECT,
    ...options,
    config: { dmPolicy: 'open', ...options.config },
  });
  const t = createTestContext();
  cleanups.push(() => plugin.stop());
  await plugin.start(t.ctx);
  if (setup.linked !== false) await eventually(() => plugin.status().state === 'connected');
  return { plugin, fake, t, stateDir };
}

const readJson = async (path: string): Promise<unknown> =>
  readFile(path, 'utf8').then(
    (text) => JSON.parse(text) as unknown,
    () => undefined,
  );

const to = (chat: string) => ({ channel: 'whatsapp', accountId: 'default', to: chat });

describe('linking', () => {
  it('prints a QR code, links on scan, stores the creds and connects after the restart WhatsApp asks for', async () => {
    const printed: string[] = [];
    const qrs: string[] = [];
    const { plugin, fake, stateDir } = await boot(
      { qrOutput: { write: (s: string) => printed.push(s) }, onQr: (qr) => qrs.push(qr) },
      { linked: false },
    );
    const qr = await eventually(() => plugin.latestQr());
    expect(qrs).toEqual([qr]);
    expect(printed.join('')).toContain('Linked devices');
    expect(printed.join('')).toMatch(/[▄▀█]/);
    expect(plugin.status().state).toBe('starting');
    expect(plugin.status().detail).toContain(qr);
    expect(plugin.status().accounts?.[0]).toMatchObject({ state: 'awaiting-qr', detail: qr });

    fake.current.scanQr();
    await eventually(() => plugin.status().state === 'connected');
    expect(fake.sockets).toHaveLength(2);
    expect(plugin.latestQr()).toBeUndefined();
    expect(plugin.status().detail).toMatch(/^connected as \+15550001111; last socket activity \d+ s ago$/);
    const creds = await eventually(() => readJson(join(stateDir, 'auth', 'creds.json')));
    expect((creds as { me: { id: string } }).me.id).toBe(fake.account.id);
  });

  it("forgets the QR code when the connection closes, and shows the next socket's new one", async () => {
    const { plugin, fake } = await boot({}, { linked: false });
    const first = await eventually(() => plugin.latestQr());
    fake.current.drop(408, 'QR refs attempts ended');
    expect(plugin.latestQr()).toBeUndefined();
    expect(plugin.status().accounts?.[0]?.state).not.toBe('awaiting-qr');
    expect(plugin.status().detail ?? '').not.toContain(first);
    const second = await eventually(() => plugin.latestQr());
    expect(second).not.toBe(first);
  });

  it('reconnects with stored creds without showing a QR code', async () => {
    const { plugin, fake } = await boot();
    expect(plugin.latestQr()).toBeUndefined();
    expect(fake.sockets).toHaveLength(1);
  });

  it('refuses to start on a corrupt creds file and says how to re-link', async () => {
    const stateDir = await tempDir();
    await mkdir(join(stateDir, 'auth'));
    await writeFile(join(stateDir, 'auth', 'creds.json'), '{"me": ');
    const fake = new FakeWhatsApp();
    const plugin = createWhatsAppPlugin({ stateDir, makeSocket: fake.makeSocket, qrOutput: false });
    const error = await plugin.start(createTestContext().ctx).catch((e: unknown) => e);
    expect(isColloquyError(error) && error.code).toBe('STORE_CORRUPT');
    expect(plugin.status().state).toBe('error');
    expect(plugin.status().detail).toContain(join(stateDir, 'auth', 'creds.json'));
    expect(plugin.status().detail).toContain('scan the new QR code');
    expect(fake.sockets).toHaveLength(0);
  });

  it('keeps the previous creds readable when a creds write is interrupted by an error', async () => {
    let armed = false;
    const fs: StateFs = {
      ...nodeStateFs,
      async open(path, flags) {
        const handle = await nodeStateFs.open(path, flags);
        if (!armed || flags !== 'w' || !path.includes('creds.json')) return handle;
        armed = false;
        return {
          writeFile: async (data: string) => {
            await handle.writeFile(data.slice(0, 40));
            throw new Error('EIO: disk went away');
          },
          sync: () => handle.sync(),
          close: () => handle.close(),
        };
      },
    };
    const { fake, t, stateDir } = await boot({ fs });
    armed = true;
    fake.current.emit('creds.update', { me: { ...fake.account, name: 'Renamed' } });
    await eventually(() =>
      t.logs.find((l) => l.level === 'error' && l.msg.includes('saving WhatsApp credentials failed')),
    );
    const reloaded = await useAtomicAuthState(join(stateDir, 'auth'));
    expect(reloaded.state.creds.me?.name).toBe('Owner');
    expect((await readdir(join(stateDir, 'auth'))).filter((n) => n.endsWith('.tmp'))).toEqual([]);
  });
});

describe('connection', () => {
  it('reconnects with backoff after a restartable close and reports it meanwhile', async () => {
    const { plugin, fake } = await boot({ reconnect: { initialDelayMs: 60, maxDelayMs: 60 } });
    fake.current.drop(428, 'Connection Closed');
    expect(plugin.status().state).toBe('reconnecting');
    expect(plugin.status().detail).toContain('Connection Closed (428)');
    await fake.waitForSockets(2);
    await eventually(() => plugin.status().state === 'connected');
  });

  it('aims every socket, reconnects included, at webSocketUrl when the config sets one', async () => {
    const url = 'ws://127.0.0.1:7777/ws/chat';
    const { plugin, fake } = await boot({ config: { webSocketUrl: url } });
    expect(fake.current.config.waWebSocketUrl).toBe(url);
    fake.current.drop(428, 'Connection Closed');
    await fake.waitForSockets(2);
    await eventually(() => plugin.status().state === 'connected');
    expect(fake.sockets.map((s) => s.config.waWebSocketUrl)).toEqual([url, url]);
  });

  it("leaves Baileys' default endpoint alone when webSocketUrl is not set", async () => {
    const { fake } = await boot();
    expect(fake.current.config).not.toHaveProperty('waWebSocketUrl');
  });

  it('stops with a clear re-link message when logged out, and sends then fail fast', async () => {
    const { plugin, fake, stateDir } = await boot();
    fake.current.drop(401, 'Connection Failure');
    const status = plugin.status();
    expect(status.state).toBe('logged-out');
    expect(status.detail).toContain('logged this device out');
    expect(status.detail).toContain(join(stateDir, 'auth'));
    expect(status.detail).toContain('scan the new QR code');
    await pastAnyReconnect(RECONNECT);
    expect(fake.sockets).toHaveLength(1);
    const error = await plugin.send(to('15552220000'), { text: 'hi' }).catch((e: unknown) => e);
    expect(isColloquyError(error) && error.code).toBe('CHANNEL_ERROR');
  });

  it.each([
    [500, 'bad session'],
    [411, 'multi-device mismatch'],
  ])('tells the operator to re-link after close code %i (%s) instead of retrying forever', async (code) => {
    const { plugin, fake, stateDir } = await boot();
    fake.current.drop(code, 'Stream Errored');
    expect(plugin.status().state).toBe('error');
    expect(plugin.status().detail).toContain('reconnecting cannot fix this');
    expect(plugin.status().detail).toContain(join(stateDir, 'auth'));
    expect(plugin.status().detail).toContain('scan the new QR code');
    await pastAnyReconnect(RECONNECT);
    expect(fake.sockets).toHaveLength(1);
  });

  it('does not fight another session that replaced this one', async () => {
    const { plugin, fake } = await boot();
    fake.current.drop(440, 'Stream Errored (conflict)');
    expect(plugin.status()).toMatchObject({ state: 'error' });
    expect(plugin.status().detail).toContain('another WhatsApp Web session');
    await pastAnyReconnect(RECONNECT);
    expect(fake.sockets).toHaveLength(1);
  });

  it('replaces a socket that went silent, and keeps one that shows frames', async () => {
    // Only the watchdog's clock is faked: socket boot and reconnects keep real timeouts.
    vi.useFakeTimers({ toFake: ['Date', 'performance', 'setInterval', 'clearInterval'] });
    try {
      const { plugin, fake } = await boot({ staleAfterMs: 1000 });
      const first = fake.current;
      for (let i = 0; i < 10; i++) {
        vi.advanceTimersByTime(400);
        first.frame();
      }
      expect(fake.sockets).toHaveLength(1);
      expect(plugin.status().state).toBe('connected');
      vi.advanceTimersByTime(1400);
      expect(first.closed).toBe(true);
      expect(plugin.status().detail).toMatch(/^no frame from WhatsApp for 1 s \(408\); reconnecting/);
      await fake.waitForSockets(2);
      await eventually(() => plugin.status().state === 'connected');
    } finally {
      vi.useRealTimers();
    }
  });

  it('waits for a reconnect before sending', async () => {
    const { plugin, fake } = await boot({ reconnect: { initialDelayMs: 50, maxDelayMs: 50 } });
    fake.current.drop(408, 'Connection Lost');
    const result = await plugin.send(to('15552220000'), { text: 'after the blip' });
    expect(fake.sockets).toHaveLength(2);
    expect(fake.sent.map((s) => s.id)).toEqual([result.messageId]);
  });

  it('stops cleanly, once, and never reconnects afterwards', async () => {
    const { plugin, fake } = await boot();
    await plugin.stop();
    await plugin.stop();
    expect(fake.current.closed).toBe(true);
    expect(plugin.status().state).toBe('disconnected');
    await pastAnyReconnect(RECONNECT);
    expect(fake.sockets).toHaveLength(1);
  });

  it('unlinks on logout and deletes the stored creds', async () => {
    const { plugin, stateDir } = await boot();
    await plugin.logout();
    expect(plugin.status().state).toBe('logged-out');
    expect(await readdir(stateDir)).not.toContain('auth');
  });
});

describe('inbound', () => {
  it('hands a direct message to the runtime with the phone number as the stable peer id', async () => {
    const { fake, t } = await boot();
    const msg = dm(ALICE, 'hello there', { pushName: 'Alice' });
    fake.current.deliver([msg]);
    const [inbound] = await eventually(() => t.received.length === 1 && t.received);
    expect(inbound).toMatchObject({
      channel: 'whatsapp',
      accountId: 'default',
      chat: { type: 'direct', id: '15552220000' },
      sender: { id: '15552220000', name: 'Alice' },
      text: 'hello there',
      mentionsBot: true,
      messageId: msg.key.id,
    });
    expect(inbound?.timestamp).toBeGreaterThan(0);
  });

  it('maps LID and phone JIDs of one person to one peer id, learned from lid-mapping updates', async () => {
    const { fake, t, stateDir } = await boot();
    fake.current.emit('lid-mapping.update', { lid: ALICE_LID, pn: ALICE });
    fake.current.deliver([dm(ALICE_LID, 'from my lid')]);
    fake.current.deliver([dm(ALICE, 'from my phone')]);
    await eventually(() => t.received.length === 2);
    expect(t.received.map((m) => m.chat.id)).toEqual(['15552220000', '15552220000']);
    const saved = await eventually(async () => {
      const map = (await readJson(join(stateDir, 'lid-map.json'))) as
        | { lidToPhone: Record<string, string> }
        | undefined;
      return map?.lidToPhone['88112233'] ? map : undefined;
    });
    expect(saved.lidToPhone).toEqual({ '88112233': '15552220000', '99000111': '15550001111' });
  });

  it('learns the mapping from alternate JIDs on message keys and from contacts', async () => {
    const { fake, t } = await boot({ contacts: { '70000001@lid': '+1 555 000 7777' } });
    fake.current.deliver([dm('70000002@lid', 'alt key', { alt: '15550008888@s.whatsapp.net' })]);
    fake.current.deliver([dm('70000001@lid', 'from contacts')]);
    fake.current.emit('contacts.upsert', [{ id: '70000003@lid', phoneNumber: '15550009999@s.whatsapp.net' }]);
    fake.current.deliver([dm('70000003@lid', 'from a contact event')]);
    fake.current.deliver([dm('70000004@lid', 'nobody knows me')]);
    await eventually(() => t.received.length === 4);
    expect(t.received.map((m) => m.sender.id)).toEqual([
      '15550008888',
      '15550007777',
      '15550009999',
      '70000004@lid',
    ]);
  });

  it('remembers the learned mapping across restarts', async () => {
    const first = await boot();
    first.fake.current.emit('lid-mapping.update', { lid: ALICE_LID, pn: ALICE });
    await first.plugin.stop();
    const second = await boot({}, { stateDir: first.stateDir });
    second.fake.current.deliver([dm(ALICE_LID, 'still me')]);
    await eventually(() => second.t.received.length === 1);
    expect(second.t.received[0]?.chat.id).toBe('15552220000');
  });

  it('gates groups on mentions: an unmentioned message is not addressed to the bot, a mention is', async () => {
    const { fake, t } = await boot();
    fake.current.deliver([groupMessage(GROUP, ALICE, 'just chatting')]);
    fake.current.deliver([
      groupMessage(GROUP, ALICE, '@15550001111 what time is it?', { mentions: [OWNER] }),
    ]);
    fake.current.deliver([groupMessage(GROUP, ALICE, 'lid mention', { mentions: [OWNER_LID] })]);
    fake.current.deliver([groupMessage(GROUP, ALICE, '/status')]);
    await eventually(() => t.received.length === 4);
    expect(t.received.map((m) => [m.chat, m.mentionsBot])).toEqual([
      [{ type: 'group', id: GROUP }, false],
      [{ type: 'group', id: GROUP }, true],
      [{ type: 'group', id: GROUP }, true],
      [{ type: 'group', id: GROUP }, true],
    ]);
    expect(t.received[0]?.sender.id).toBe('15552220000');
  });

  it('treats a reply to the bot as addressing it, and honours per-group mention settings', async () => {
    const quiet = '120363000000000001@g.us';
    const { plugin, fake, t } = await boot({ config: { groups: { [quiet]: { requireMention: false } } } });
    const reply = await plugin.send(to(GROUP), { text: 'I said this' });
    fake.current.deliver([
      groupMessage(GROUP, ALICE, 'answering you', { quoted: { id: reply.messageId, participant: OWNER } }),
    ]);
    fake.current.deliver([groupMessage(quiet, ALICE, 'no mention needed here')]);
    await eventually(() => t.received.length === 2);
    expect(t.received.map((m) => m.mentionsBot)).toEqual([true, true]);
    expect(t.received[0]?.replyToMessageId).toBe(reply.messageId);
  });

  it('ignores its own echoes, the owner typing elsewhere, status broadcasts and old appended messages', async () => {
    const { plugin, fake, t } = await boot();
    fake.echoSends = true;
    await plugin.send(to('15552220000'), { text: 'my reply' });
    fake.current.deliver([dm(ALICE, 'owner typed on the phone', { fromMe: true })]);
    fake.current.deliver([groupMessage('status@broadcast', ALICE, 'my status')]);
    fake.current.deliver([dm(ALICE, 'old message', { sentAt: Date.now() - 86_400_000 })], 'append');
    fake.current.deliver([
      {
        key: { remoteJid: ALICE, id: 'REACT1', fromMe: false },
        message: { reactionMessage: { text: '👍' } },
      },
    ]);
    fake.current.deliver([dm(ALICE, 'the real one')]);
    expect(await receivedBefore(fake, t)).toEqual(['the real one']);
  });

  it('handles a redelivered message only once', async () => {
    const { fake, t } = await boot();
    const msg = dm(ALICE, 'once');
    fake.current.deliver([msg]);
    fake.current.deliver([msg]);
    expect(await receivedBefore(fake, t)).toEqual(['once']);
  });

  describe('messages that arrived while offline (delivered as append after a reconnect)', () => {
    /** Drops the connection; resolves once the next one is open. */
    async function reconnect(plugin: WhatsAppPlugin, fake: FakeWhatsApp): Promise<void> {
      const count = fake.sockets.length;
      fake.current.drop(428, 'Connection Closed');
      await fake.waitForSockets(count + 1);
      await eventually(() => plugin.status().state === 'connected');
    }

    it('answers one sent during the disconnect, once, even when it also comes as notify', async () => {
      const { plugin, fake, t } = await boot();
      await reconnect(plugin, fake);
      const missed = dm(ALICE, 'sent while you were offline');
      fake.current.deliver([missed], 'append');
      await eventually(() => t.received.length >= 1);
      fake.current.deliver([missed], 'notify');
      fake.current.deliver([missed], 'append');
      expect(await receivedBefore(fake, t)).toEqual(['sent while you were offline']);
    });

    it('ignores appended messages older than the last connection, its own, and history sync', async () => {
      const { plugin, fake, t } = await boot();
      await reconnect(plugin, fake);
      fake.current.deliver([dm(ALICE, 'from before', { sentAt: Date.now() - 3_600_000 })], 'append');
      fake.current.deliver([dm(ALICE, 'sent from my phone', { fromMe: true })], 'append');
      fake.current.deliver(
        [
          {
            key: { remoteJid: OWNER, fromMe: false, id: 'HIST1' },
            message: { protocolMessage: { type: 5, historySyncNotification: { syncType: 1 } } },
            messageTimestamp: Math.floor(Date.now() / 1000),
          },
        ],
        'append',
      );
      fake.current.deliver([dm(ALICE, 'live')]);
      expect(await receivedBefore(fake, t)).toEqual(['live']);
    });

    it('after a restart, answers what arrived while it was stopped, and nothing it answered before', async () => {
      const first = await boot();
      const answered = dm(ALICE, 'answered before the restart');
      first.fake.current.deliver([answered]);
      await eventually(() => first.t.received.length === 1);
      await first.plugin.stop();
      const before = dm(ALICE, 'before the first connection ended', { sentAt: Date.now() - 60_000 });

      const second = await boot({}, { stateDir: first.stateDir, linked: false, fake: first.fake });
      await eventually(() => second.plugin.status().state === 'connected');
      const missed = dm(ALICE, 'sent while stopped');
      second.fake.current.deliver([answered], 'append');
      second.fake.current.deliver([before], 'append');
      second.fake.current.deliver([missed], 'append');
      await eventually(() => second.t.received.length >= 1);
      second.fake.current.deliver([missed], 'notify');
      expect(await receivedBefore(second.fake, second.t)).toEqual(['sent while stopped']);

      // And once more after another restart: nothing runs twice.
      await second.plugin.stop();
      const third = await boot({}, { stateDir: first.stateDir, linked: false, fake: first.fake });
      await eventually(() => third.plugin.status().state === 'connected');
      third.fake.current.deliver([missed, answered], 'append');
      expect(await receivedBefore(third.fake, third.t)).toEqual([]);
    });
  });

  it('in self-chat mode answers only the owner in their own chat, never its own replies', async () => {
    const { plugin, fake, t } = await boot({ config: { selfChatMode: true } });
    fake.echoSends = true;
    fake.current.deliver([dm(ALICE, 'someone else')]);
    fake.current.deliver([groupMessage(GROUP, ALICE, 'a group', { mentions: [OWNER] })]);
    fake.current.deliver([dm(OWNER, 'note to self', { fromMe: true, pushName: 'Owner' })]);
    await eventually(() => t.received.length === 1);
    expect(t.received[0]).toMatchObject({
      chat: { type: 'direct', id: '15550001111' },
      text: 'note to self',
    });
    await plugin.send(to('15550001111'), { text: 'bot answer' });
    fake.current.deliver([dm(OWNER_LID, 'from my lid chat', { fromMe: true })]);
    await eventually(() => t.received.length === 2);
    await settle();
    expect(t.received.map((m) => m.text)).toEqual(['note to self', 'from my lid chat']);
    expect(t.received[1]?.chat.id).toBe('15550001111');
  });

  it('describes images, documents and voice notes with their metadata when downloads are off', async () => {
    const { fake, t } = await boot({ config: { maxMediaBytes: 0 } });
    fake.current.deliver([
      mediaMessage(ALICE, {
        imageMessage: { mimetype: 'image/jpeg', caption: 'look at this', fileLength: 20480 },
      }),
      mediaMessage(ALICE, {
        documentWithCaptionMessage: {
          message: {
            documentMessage: {
              mimetype: 'application/pdf',
              fileName: 'report.pdf',
              fileLength: 1024,
              caption: 'Q3',
            },
          },
        },
      }),
      mediaMessage(ALICE, { audioMessage: { mimetype: 'audio/ogg; codecs=opus', seconds: 7, ptt: true } }),
    ]);
    await eventually(() => t.received.length === 3);
    const [image, doc, voice] = t.received;
    expect(image).toMatchObject({
      text: 'look at this',
      media: [{ kind: 'image', mimeType: 'image/jpeg', size: 20480 }],
    });
    expect(image?.media?.[0]?.ref).toBe(`whatsapp:${ALICE}/${image?.messageId}`);
    expect(doc).toMatchObject({
      text: 'Q3',
      media: [{ kind: 'document', fileName: 'report.pdf', mimeType: 'application/pdf' }],
    });
    expect(voice).toMatchObject({
      media: [{ kind: 'voice', durationSeconds: 7, mimeType: 'audio/ogg; codecs=opus' }],
    });
    expect(voice?.text).toBe('[voice note: audio/ogg; codecs=opus, 7 s]');
  });

  it('downloads images, voice notes and documents into the state dir, capped at maxMediaBytes', async () => {
    const { fake, t, stateDir } = await boot({ config: { maxMediaBytes: 100_000 } });
    const bytes = (n: number, fill: number) => new Uint8Array(n).fill(fill);
    fake.media.set('IMG1', bytes(3000, 1));
    fake.media.set('VOICE1', bytes(150_000, 2).subarray(0, 5000));
    fake.media.set('DOC1', bytes(2000, 3));
    fake.media.set('LIAR1', bytes(200_000, 4));
    fake.media.set('GROUPIMG', bytes(10, 5));
    fake.current.deliver([
      mediaMessage(ALICE, { imageMessage: { mimetype: 'image/jpeg', fileLength: 3000 } }, 'IMG1'),
      mediaMessage(
        ALICE,
        { audioMessage: { mimetype: 'audio/ogg; codecs=opus', ptt: true, seconds: 2 } },
        'VOICE1',
      ),
      mediaMessage(
        ALICE,
        {
          documentMessage: {
            mimetype: 'application/pdf',
            fileName: 'r.pdf',
            fileLength: 2000,
            caption: 'doc',
          },
        },
        'DOC1',
      ),
      mediaMessage(ALICE, { documentMessage: { mimetype: 'application/pdf', fileLength: 900_000 } }, 'HUGE1'),
      mediaMessage(ALICE, { documentMessage: { mimetype: 'text/plain', fileLength: 1000 } }, 'LIAR1'),
      { ...groupMessage(GROUP, ALICE, 'x'), message: { imageMessage: { mimetype: 'image/png' } } },
    ]);
    await eventually(() => t.received.length === 6);
    const dir = join(stateDir, 'media');
    const [image, voice, doc, huge, liar] = t.received;
    expect(image?.media?.[0]).toMatchObject({ kind: 'image', ref: join(dir, 'IMG1.jpg'), size: 3000 });
    expect(voice?.media?.[0]).toMatchObject({ kind: 'voice', ref: join(dir, 'VOICE1.ogg'), size: 5000 });
    expect(doc?.media?.[0]).toMatchObject({ kind: 'document', ref: join(dir, 'DOC1.pdf') });
    expect(await readFile(join(dir, 'IMG1.jpg'))).toEqual(Buffer.from(bytes(3000, 1)));
    expect((await readFile(join(dir, 'VOICE1.ogg'))).length).toBe(5000);
    expect(doc?.text).toBe('doc');
    expect(huge?.media?.[0]?.ref).toBe(`whatsapp:${ALICE}/HUGE1`);
    expect(huge?.text).toContain('[document not downloaded: larger than maxMediaBytes (0.1 MB)]');
    expect(liar?.media?.[0]?.ref).toBe(`whatsapp:${ALICE}/LIAR1`);
    expect(liar?.text).toContain('not downloaded: larger than maxMediaBytes');
    expect(fake.downloads).toEqual(['IMG1', 'VOICE1', 'DOC1', 'LIAR1']);
    expect((await readdir(dir)).sort()).toEqual(['DOC1.pdf', 'IMG1.jpg', 'VOICE1.ogg']);
  });

  it('marks answered messages read only when read receipts are on', async () => {
    const off = await boot();
    off.fake.current.deliver([dm(ALICE, 'a')]);
    await eventually(() => off.t.received.length === 1);
    expect(off.fake.reads).toEqual([]);

    const on = await boot({ config: { readReceipts: true } });
    const msg = dm(ALICE, 'b');
    on.fake.current.deliver([msg, groupMessage(GROUP, ALICE, 'not for the bot')]);
    await eventually(() => on.t.received.length === 2);
    await settle();
    expect(on.fake.reads).toEqual([msg.key]);
  });
});

describe('direct-message policy', () => {
  it('allowlist answers listed numbers (in any spelling, by LID too) and ignores others silently', async () => {
    const { fake, t } = await boot({ config: { dmPolicy: 'allowlist', allowFrom: ['+1 (555) 222-0000'] } });
    fake.current.emit('lid-mapping.update', { lid: ALICE_LID, pn: ALICE });
    fake.current.deliver([
      dm('15553330000@s.whatsapp.net', 'stranger'),
      dm(ALICE, 'listed'),
      dm(ALICE_LID, 'listed lid'),
    ]);
    await eventually(() => t.received.length === 2);
    await settle();
    expect(t.received.map((m) => m.text)).toEqual(['listed', 'listed lid']);
    expect(fake.sent).toEqual([]);
  });

  it('allowlist recognises a listed number writing from a LID that Baileys 7 LID store maps', async () => {
    const { fake, t } = await boot({ config: { dmPolicy: 'allowlist', allowFrom: ['+15552220000'] } });
    fake.lidToPn.set(ALICE_LID, ALICE);
    fake.current.deliver([dm(ALICE_LID, 'hi from my lid'), dm('70000009@lid', 'unknown lid')]);
    await eventually(() => t.received.length === 1);
    await settle();
    expect(t.received.map((m) => [m.text, m.chat.id])).toEqual([['hi from my lid', '15552220000']]);
  });

  it('allowlist recognises a listed number from the remoteJidAlt of a LID chat and a group participantAlt', async () => {
    const { fake, t } = await boot({ config: { dmPolicy: 'allowlist', allowFrom: ['+15552220000'] } });
    fake.current.deliver([
      groupMessage(GROUP, '88112299@lid', '@bot hi', {
        mentions: [OWNER],
        participantAlt: '15552229999@s.whatsapp.net',
      }),
      dm(ALICE_LID, 'hi', { alt: ALICE }),
    ]);
    await eventually(() => t.received.length === 2);
    expect(t.received.map((m) => m.sender.id)).toEqual(['15552229999', '15552220000']);
  });

  it('pairing sends a newcomer one code, and lets them in once the owner approves it', async () => {
    // Alice is allowed: her message after the stranger's shows when the plugin went past it.
    const { fake, t } = await boot({ config: { dmPolicy: 'pairing', allowFrom: ['+15552220000'] } });
    const stranger = '15553330000@s.whatsapp.net';
    fake.current.deliver([dm(stranger, 'hi bot', { pushName: 'Carol' })]);
    const codeMessage = await eventually(() => fake.sent[0]);
    const code = /pairing code: ([A-Z2-9]{8})/.exec(codeMessage.text)?.[1];
    expect(code).toBeDefined();
    fake.current.deliver([dm(stranger, 'hello??')]);
    fake.current.deliver([dm(ALICE, 'after the stranger')]);
    await eventually(() => t.received.length === 1);
    expect(fake.sent).toHaveLength(1);
    expect(t.received.map((m) => m.text)).toEqual(['after the stranger']);
    expect((await t.ctx.pairing.list()).pending).toMatchObject([
      { code, peerId: '15553330000', displayName: 'Carol', meta: { jid: stranger } },
    ]);

    const approved = await approvePairing(t.store, 'whatsapp', (code ?? '').toLowerCase());
    expect(approved).toMatchObject({ peerId: '15553330000', displayName: 'Carol' });
    fake.current.deliver([dm(stranger, 'now?')]);
    await eventually(() => t.received.length === 2);
    expect(t.received[1]?.text).toBe('now?');
    expect((await t.ctx.pairing.list()).pending).toEqual([]);
  });
});

describe('outbound', () => {
  it('converts markdown and returns the platform message id', async () => {
    const { plugin, fake } = await boot();
    const result = await plugin.send(to('15552220000'), { text: '**Done**: ~~two~~ *three* files' });
    expect(fake.sent).toEqual([{ jid: ALICE, text: '*Done*: ~two~ _three_ files', id: result.messageId }]);
    expect(result.messageIds).toEqual([result.messageId]);
  });

  it('hands Baileys the content of a sent message when a recipient asks for a retry', async () => {
    const { plugin, fake } = await boot();
    const { messageId } = await plugin.send(to('15552220000'), { text: 'retry me' });
    const getMessage = fake.current.config.getMessage;
    expect(await getMessage?.({ remoteJid: ALICE, id: messageId, fromMe: true })).toEqual({
      extendedTextMessage: { text: 'retry me' },
    });
    expect(await getMessage?.({ remoteJid: ALICE, id: 'UNKNOWN', fromMe: true })).toBeUndefined();
  });

  it('answers a retry for a message sent before a restart from the state dir', async () => {
    const first = await boot();
    const { messageId } = await first.plugin.send(to('15552220000'), { text: 'sent before the restart' });
    await first.plugin.stop();
    const second = await boot({}, { stateDir: first.stateDir });
    const getMessage = second.fake.current.config.getMessage;
    expect(await getMessage?.({ remoteJid: ALICE, id: messageId, fromMe: true })).toEqual({
      extendedTextMessage: { text: 'sent before the restart' },
    });
  });

  it('gives Baileys cached group metadata, filled from group events and one fetch per new group', async () => {
    const { fake, t } = await boot();
    const cached = fake.current.config.cachedGroupMetadata;
    const meta = (id: string, subject: string): GroupMetadata => ({
      id,
      subject,
      owner: undefined,
      participants: [{ id: '70000042@lid', phoneNumber: '15550004242@s.whatsapp.net' }],
    });
    fake.current.emit('groups.upsert', [meta(GROUP, 'Team')]);
    expect(await cached?.(GROUP)).toMatchObject({ id: GROUP, subject: 'Team' });
    fake.current.emit('groups.update', [{ id: GROUP, subject: 'Renamed' }]);
    expect(await cached?.(GROUP)).toMatchObject({
      subject: 'Renamed',
      participants: [{ id: '70000042@lid' }],
    });
    fake.current.emit('group-participants.update', {
      id: GROUP,
      author: ALICE,
      participants: [{ id: ALICE }],
      action: 'add',
    });
    expect(await cached?.(GROUP)).toBeUndefined();

    const other = '120363049999999999@g.us';
    fake.groups.set(other, meta(other, 'Other'));
    fake.current.deliver([groupMessage(other, '70000042@lid', 'one'), groupMessage(other, ALICE, 'two')]);
    await eventually(() => cached?.(other));
    fake.current.deliver([groupMessage(other, '70000042@lid', '@bot three', { mentions: [OWNER] })]);
    const three = await eventually(() => t.received.find((m) => m.text === '@bot three'));
    expect(three.sender.id).toBe('15550004242');
    expect(fake.groupQueries).toEqual([other]);
  });

  it('sends plain text untouched when asked to', async () => {
    const { plugin, fake } = await boot();
    await plugin.send(to('15552220000'), { text: '**raw**', format: 'plain' });
    expect(fake.sent[0]?.text).toBe('**raw**');
  });

  it('replies to the JID the person wrote from (their LID chat)', async () => {
    const { plugin, fake, t } = await boot();
    fake.current.emit('lid-mapping.update', { lid: ALICE_LID, pn: ALICE });
    fake.current.deliver([dm(ALICE_LID, 'hi')]);
    await eventually(() => t.received.length === 1);
    await plugin.send(to('15552220000'), { text: 'hello' });
    expect(fake.sent[0]?.jid).toBe(ALICE_LID);
  });

  it('chunks a long reply at the configured length and returns every id', async () => {
    const { plugin, fake } = await boot({ config: { chunkLength: 1000 } });
    const paragraphs = Array.from(
      { length: 6 },
      (_, i) => `Paragraph ${i}: ${'words and more words '.repeat(20)}`,
    );
    const result = await plugin.send(to('15552220000'), { text: paragraphs.join('\n\n') });
    expect(fake.sent.length).toBeGreaterThan(2);
    expect(result.messageIds).toEqual(fake.sent.map((s) => s.id));
    for (const s of fake.sent) expect(s.text.length).toBeLessThanOrEqual(1000);
    expect(fake.sent[0]?.text.startsWith('Paragraph 0')).toBe(true);
  });

  it('quotes the message it answers in groups (first chunk only) but not in direct chats', async () => {
    const { plugin, fake, t } = await boot({ config: { chunkLength: 200 } });
    const question = groupMessage(GROUP, ALICE, 'question', { mentions: [OWNER] });
    const direct = dm(ALICE, 'direct question');
    fake.current.deliver([question, direct]);
    await eventually(() => t.received.length === 2);
    await plugin.send(to(GROUP), {
      text: `${'answer '.repeat(40)}`,
      replyToMessageId: question.key.id ?? '',
    });
    await plugin.send(to('15552220000'), { text: 'dm answer', replyToMessageId: direct.key.id ?? '' });
    const groupSends = fake.sent.filter((s) => s.jid === GROUP);
    expect(groupSends.length).toBeGreaterThan(1);
    expect(groupSends[0]?.quoted?.key).toEqual(question.key);
    expect(groupSends.slice(1).every((s) => s.quoted === undefined)).toBe(true);
    expect(fake.sent.find((s) => s.jid === ALICE)?.quoted).toBeUndefined();
  });

  it('quotes the latest message that addressed the bot when a group reply names none', async () => {
    const { plugin, fake, t } = await boot();
    const mention = groupMessage(GROUP, ALICE, 'hey bot', { mentions: [OWNER] });
    fake.current.deliver([groupMessage(GROUP, ALICE, 'unrelated chatter'), mention]);
    await eventually(() => t.received.length === 2);
    await plugin.send(to(GROUP), { text: 'answer' });
    await plugin.send(to(GROUP), { text: 'follow-up' });
    expect(fake.sent.map((s) => s.quoted?.key.id)).toEqual([mention.key.id, undefined]);
  });

  it('keeps composing alive with one presence per few seconds and pauses once refreshes stop', async () => {
    const { plugin, fake } = await boot({ typingTimeoutMs: 60 });
    await plugin.sendTyping?.(to('15552220000'));
    await plugin.sendTyping?.(to('15552220000'));
    expect(fake.presences).toEqual([{ type: 'composing', jid: ALICE }]);
    await eventually(() => fake.presences.length === 2);
    expect(fake.presences[1]).toEqual({ type: 'paused', jid: ALICE });
  });

  it('shows composing while a run is active and pauses when the reply goes out', async () => {
    const { plugin, fake } = await boot();
    await plugin.sendTyping?.(to('15552220000'));
    expect(fake.presences).toEqual([{ type: 'composing', jid: ALICE }]);
    await plugin.send(to('15552220000'), { text: 'done' });
    await eventually(() => fake.presences.length === 2);
    expect(fake.presences[1]).toEqual({ type: 'paused', jid: ALICE });
  });

  it('reports which chunks were sent when a send fails part-way', async () => {
    const { plugin, fake } = await boot({ config: { chunkLength: 200 } });
    let calls = 0;
    const socket = fake.current;
    const original = socket.sendMessage.bind(socket);
    socket.sendMessage = async (jid, content, options) => {
      calls += 1;
      if (calls === 2) throw new Error('rate-overlimit');
      return original(jid, content, options);
    };
    const error = await plugin
      .send(to('15552220000'), { text: 'word '.repeat(100) })
      .catch((e: unknown) => e);
    expect(isColloquyError(error) && error.code).toBe('CHANNEL_ERROR');
    expect(isColloquyError(error) && error.details.sentMessageIds).toEqual([fake.sent[0]?.id]);
    expect((error as Error).message).toContain('after 1 of');
  });

  it('refuses to send an empty message', async () => {
    const { plugin } = await boot();
    const error = await plugin.send(to('15552220000'), { text: '  ' }).catch((e: unknown) => e);
    expect(isColloquyError(error) && error.code).toBe('INVALID_ARGUMENT');
  });
});

describe('createWhatsAppPlugin', () => {
  it('validates its settings like the config file does', () => {
    expect(() =>
      createWhatsAppPlugin({ stateDir: '/tmp/x', config: { dmPolicy: 'everyone' as 'open' } }),
    ).toThrow(/channels\.whatsapp\.dmPolicy/);
  });

  it('takes its state folder from the config section when not given one, and needs one of the two', () => {
    expect(() => createWhatsAppPlugin({ config: { stateDir: '/tmp/x' } })).not.toThrow();
    expect(() => createWhatsAppPlugin({})).toThrow(
      expect.objectContaining({
        code: 'CONFIG_INVALID',
        details: { issues: [expect.objectContaining({ path: 'channels.whatsapp.stateDir' })] },
      }),
    );
  });

  it('declares WhatsApp capabilities', () => {
    const plugin = createWhatsAppPlugin({ stateDir: '/tmp/x', config: { chunkLength: 3000 } });
    expect(plugin.id).toBe('whatsapp');
    expect(plugin.capabilities).toMatchObject({
      markdown: 'whatsapp',
      typing: true,
      threads: false,
      maxTextLength: 3000,
    });
  });

  it('closes on the runtime abort signal', async () => {
    const { plugin, fake, t } = await boot();
    t.abort();
    await eventually(() => plugin.status().state === 'disconnected');
    expect(fake.current.closed).toBe(true);
  });

  it('surfaces a boom close on sends in flight as a channel error', async () => {
    const { plugin, fake } = await boot();
    fake.current.failNextSend = boom(500, 'Internal Server Error');
    const error = await plugin.send(to('15552220000'), { text: 'x' }).catch((e: unknown) => e);
    expect(isColloquyError(error) && error.details.code).toBe(500);
  });
});

describe('the cluster lease', () => {
  it('opens no socket until it holds the account lease, and closes it when the lease is lost', async () => {
    const fake = new FakeWhatsApp();
    const stateDir = await tempDir();
    await link(stateDir, fake);
    const plugin = createWhatsAppPlugin({
      stateDir,
      makeSocket: fake.makeSocket,
      qrOutput: false,
      config: { dmPolicy: 'open' },
      reconnect: RECONNECT,
    });
    const t = createTestContext();
    const grants: { name: string; grant: (lease: ChannelLease) => void }[] = [];
    t.ctx.lease = (name) => new Promise((resolve) => grants.push({ name, grant: resolve }));
    cleanups.push(() => plugin.stop());
    await plugin.start(t.ctx);
    await eventually(() => grants.length === 1);
    expect(grants[0]!.name).toBe('whatsapp:default');
    await pastAnyReconnect(RECONNECT);
    expect(fake.sockets).toHaveLength(0);
    expect(plugin.status().state).toBe('standby');

    const lost = new AbortController();
    grants[0]!.grant({ lost: lost.signal, release: async () => {} });
    await eventually(() => plugin.status().state === 'connected');
    expect(fake.sockets).toHaveLength(1);

    lost.abort();
    await eventually(() => grants.length === 2);
    expect(plugin.status().state).toBe('standby');
    // The lost socket's close must not start a reconnect while the lease is away.
    await pastAnyReconnect(RECONNECT);
    expect(fake.sockets).toHaveLength(1);
    grants[1]!.grant({ lost: new AbortController().signal, release: async () => {} });
    await eventually(() => plugin.status().state === 'connected');
    expect(fake.sockets).toHaveLength(2);
  });
});

describe('messages the store could not take', () => {
  it('hands a message to the runtime again until it is stored, before the next message of its chat', async () => {
    const { fake, t } = await boot({ receiveBackoff: { initialDelayMs: 5, maxDelayMs: 20 } });
    let refusals = 0;
    const take = t.ctx.receive.bind(t.ctx);
    // The database restarting: the first message is refused twice, as the store fails.
    t.ctx.receive = async (message) => {
      if (message.text === 'first' && refusals++ < 2) {
        throw new ColloquyError('STORE_ERROR', 'The connection to PostgreSQL failed.');
      }
      await take(message);
    };
    fake.current.deliver([dm(ALICE, 'first')]);
    fake.current.deliver([dm(ALICE, 'second')]);
    await eventually(() => t.received.length === 2);
    expect(refusals).toBe(3);
    expect(t.received.map((m) => m.text)).toEqual(['first', 'second']);
  });
});
