import type { PlatformSentMessage } from '@colloquy/testkit/conformance';
import { runChannelPluginConformance } from '@colloquy/testkit/conformance';
import { createWebChatPlugin } from '../src/index.js';
import { VISITOR_COOKIE } from '../src/security/identity.js';
import { randomId, signValue } from '../src/security/signed-value.js';
import { COOKIE_SECRET } from './support/start.js';
import { TestClient } from './support/ws-client.js';

/** A visitor the fixture can act as: its id and the signed cookie a browser would hold. */
function visitor(name: string): { id: string; name: string; cookie: string } {
  const id = `v_${randomId(15)}`;
  return { id, name, cookie: `${VISITOR_COOKIE}=${signValue(COOKIE_SECRET, 'visitor', id)}` };
}

runChannelPluginConformance('webchat', () => {
  const plugin = createWebChatPlugin({ cookieSecret: COOKIE_SECRET, config: { port: 0 } });
  const peers = [visitor('Ann'), visitor('Ben')] as const;
  const sockets = new Map<string, TestClient>();
  let base = '';
  let counter = 0;

  /** The browser tab of a visitor in a chat (its DM, or a room), opened on first use. */
  const tab = async (peerId: string, room?: string): Promise<TestClient | undefined> => {
    const key = `${peerId}|${room ?? ''}`;
    const open = sockets.get(key);
    if (open && open.closeCode === undefined) return open;
    const peer = peers.find((p) => p.id === peerId)!;
    try {
      const client = await TestClient.connect(
        base,
        room === undefined ? { cookie: peer.cookie } : { cookie: peer.cookie, room },
      );
      sockets.set(key, client);
      await client.next('history');
      return client;
    } catch {
      return undefined;
    }
  };

  return {
    plugin,
    accountId: 'default',
    peers,
    chats: { group: 'lobby' },
    sendTarget: { channel: 'webchat', to: peers[0].id, accountId: 'default' },
    async ready() {
      base = plugin.address();
      await tab(peers[0].id);
    },
    async inject(message) {
      const client = await tab(message.sender.id, message.chatType === 'direct' ? undefined : message.chatId);
      if (!client) return undefined;
      const clientId = `k${++counter}`;
      const text =
        message.chatType !== 'direct' && message.mentionBot ? `@bot ${message.text}` : message.text;
      try {
        client.send({ type: 'message', text, clientId });
        const echo = await client.next('message', (f) => f.clientId === clientId);
        return { messageId: echo.message.id };
      } catch {
        return undefined;
      }
    },
    async readSent() {
      // Peer 0's DM, and every room a tab is open in (a room's replies reach all its tabs).
      const seen = new Set<string>();
      const sent: PlatformSentMessage[] = [];
      for (const [key, socket] of sockets) {
        const [peerId, room] = key.split('|') as [string, string];
        if (room === '' && peerId !== peers[0].id) continue;
        // Frames on one socket keep their order: once the pong is back, every earlier frame is here.
        const pongs = socket.all('pong').length;
        socket.send({ type: 'ping' });
        await socket.next('pong', () => socket.all('pong').length > pongs).catch(() => undefined);
        // The page's view: the latest edit of each message, and which ones were deleted.
        const edits = new Map(socket.all('edit').map((f) => [f.message.id, f.message.text]));
        const deleted = new Set(socket.all('delete').map((f) => f.id));
        for (const frame of socket.all('message')) {
          if (frame.message.role !== 'assistant' || seen.has(frame.message.id)) continue;
          seen.add(frame.message.id);
          sent.push({
            messageId: frame.message.id,
            chatId: room === '' ? peerId : room,
            text: edits.get(frame.message.id) ?? frame.message.text,
            ...(deleted.has(frame.message.id) ? { deleted: true } : {}),
          });
        }
      }
      return sent;
    },
    async isReleased() {
      if ([...sockets.values()].some((s) => s.closeCode === undefined)) return false;
      return fetch(base).then(
        () => false,
        () => true,
      );
    },
    cleanup() {
      for (const socket of sockets.values()) socket.close();
    },
  };
});
