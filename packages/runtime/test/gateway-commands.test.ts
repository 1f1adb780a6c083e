import { afterEach, describe, expect, it } from 'vitest';
import { type Harness, startHarness } from './support/harness.js';

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

async function send(h: Harness, message: string, provenance?: { kind: 'system' | 'inter_session' }) {
  const { runId } = await h.runtime.gateway.call('agent', {
    sessionKey: 'main',
    message,
    ...(provenance ? { provenance } : {}),
  });
  return h.runtime.gateway.call('agent.wait', { runId, timeoutMs: 5000 });
}

describe('slash commands sent through the gateway', () => {
  it('answers a system (admin) run with the commands hook, without a model', async () => {
    const seen: string[] = [];
    harness = await startHarness({
      config: { agents: { defaults: { model: undefined } } },
      commands: {
        matches: (inbound) => {
          seen.push(`${inbound.channel}:${inbound.sender.isOwner === true}`);
          return inbound.text === '/help';
        },
        answer: async () => 'Commands: /help',
      },
    });
    expect(await send(harness, '/help', { kind: 'system' })).toMatchObject({
      status: 'done',
      reply: 'Commands: /help',
    });
    expect(seen).toEqual(['gateway:true']);
    const tail = await harness.store.readTail('agent:main:main', 5);
    expect(tail.map((m) => [m.role, m.content])).toEqual([
      ['user', '/help'],
      ['assistant', 'Commands: /help'],
    ]);
  });

  it('leaves an agent-to-agent message that starts with "/" to the model', async () => {
    harness = await startHarness({
      script: ['from the model'],
      commands: { matches: () => true, answer: async () => 'a command answer' },
    });
    expect(await send(harness, '/new', { kind: 'inter_session' })).toMatchObject({
      status: 'done',
      reply: 'from the model',
    });
  });
});
