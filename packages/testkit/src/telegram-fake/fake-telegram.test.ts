import { Agent, request } from 'node:http';
import type { Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { FakeTelegram } from './fake-telegram.js';

const TOKEN = '42:fake-token';

let fake: FakeTelegram | undefined;
afterEach(async () => {
  await fake?.close();
  fake = undefined;
});

/** One `getUpdates` long poll over `agent`; resolves with the socket it used and the update ids. */
function poll(agent: Agent, offset: number): Promise<{ socket: Socket; ids: number[] }> {
  return new Promise((resolve, reject) => {
    const req = request(
      `${fake!.apiRoot}/bot${TOKEN}/getUpdates?timeout=10&offset=${offset}`,
      { agent },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          body += chunk;
        });
        res.on('end', () => {
          const { result } = JSON.parse(body) as { result: { update_id: number }[] };
          resolve({ socket: req.socket as Socket, ids: result.map((u) => u.update_id) });
        });
      },
    );
    req.on('error', reject);
    req.end();
  });
}

describe('FakeTelegram long polls', () => {
  it('leaves no listener on a keep-alive socket after the polls it carried', async () => {
    fake = await FakeTelegram.start();
    fake.addBot(TOKEN, { id: 42, username: 'fake_bot' });
    const warnings: string[] = [];
    const onWarning = (warning: Error): void => {
      warnings.push(`${warning.name}: ${warning.message}`);
    };
    process.on('warning', onWarning);
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const sockets = new Set<Socket>();
      let offset = 0;
      // More polls than a socket's default listener limit (10).
      for (let i = 0; i < 15; i++) {
        const answered = poll(agent, offset);
        await fake.waitFor(() => fake!.hasPendingPoll(TOKEN), 5000, 'the long poll');
        fake.pushMessage(TOKEN, { chat: { id: 7, type: 'private', first_name: 'Ada' }, text: `m${i}` });
        const { socket, ids } = await answered;
        expect(ids).toHaveLength(1);
        offset = ids[0]! + 1;
        sockets.add(socket);
      }
      await new Promise((resolve) => setImmediate(resolve));
      expect(sockets.size).toBe(1);
      expect(warnings).toEqual([]);
    } finally {
      process.off('warning', onWarning);
      agent.destroy();
    }
  });
});
