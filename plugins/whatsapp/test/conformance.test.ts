import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runChannelPluginConformance } from '@colloquy/testkit/conformance';
import { useAtomicAuthState } from '../src/auth-state.js';
import { jidKind, jidUser } from '../src/jid.js';
import { createWhatsAppPlugin } from '../src/plugin.js';
import { dm, FakeWhatsApp, groupMessage } from './fake-socket.js';

const OWNER = '15550001111@s.whatsapp.net';
const GROUP = '120363041234567890@g.us';

runChannelPluginConformance('whatsapp', async () => {
  const fake = new FakeWhatsApp();
  const stateDir = await mkdtemp(join(tmpdir(), 'wa-conformance-'));
  const auth = await useAtomicAuthState(join(stateDir, 'auth'));
  auth.state.creds.me = fake.account;
  await auth.saveCreds();
  const plugin = createWhatsAppPlugin({
    stateDir,
    makeSocket: fake.makeSocket,
    qrOutput: false,
    config: { dmPolicy: 'open' },
  });
  return {
    plugin,
    accountId: 'default',
    peers: [
      { id: '15552220000', name: 'Alice' },
      { id: '15553330000', name: 'Bob' },
    ],
    chats: { group: GROUP },
    sendTarget: { channel: 'whatsapp', accountId: 'default', to: '15552220000' },
    ready: async () => {
      const deadline = Date.now() + 2000;
      while (plugin.status().state !== 'connected') {
        if (Date.now() > deadline) throw new Error(`whatsapp did not connect: ${plugin.status().detail}`);
        await new Promise((r) => setTimeout(r, 5));
      }
    },
    inject: async (m) => {
      const senderJid = `${m.sender.id}@s.whatsapp.net`;
      const message =
        m.chatType === 'direct'
          ? dm(senderJid, m.text, { pushName: m.sender.name ?? 'Someone' })
          : m.mentionBot
            ? groupMessage(m.chatId ?? GROUP, senderJid, `@${jidUser(OWNER)} ${m.text}`, {
                mentions: [OWNER],
              })
            : groupMessage(m.chatId ?? GROUP, senderJid, m.text);
      fake.current.deliver([message]);
      return message.key.id ? { messageId: message.key.id } : undefined;
    },
    readSent: () =>
      fake.sent.map((s) => ({
        messageId: s.id,
        chatId: jidKind(s.jid) === 'phone' ? jidUser(s.jid) : s.jid,
        text: s.text,
      })),
    isReleased: () => fake.sockets.every((s) => s.closed && s.ev.listenerCount('messages.upsert') === 0),
    cleanup: () => rm(stateDir, { recursive: true, force: true }),
  };
});
