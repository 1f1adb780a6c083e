import { resolveConfig } from '@colloquy/core';
import { type OpenAIFake, startOpenAIFake } from '@colloquy/testkit/openai-fake';
import { afterEach, describe, expect, it } from 'vitest';
import { createModelRouter } from '../src/index.js';
import { type Harness, startHarness } from './support/harness.js';

let harness: Harness | undefined;
let fake: OpenAIFake | undefined;
afterEach(async () => {
  await harness?.close();
  await fake?.close();
  harness = undefined;
  fake = undefined;
});

const OWNER = { id: 'owner-1', name: 'Owner' };
const GUEST = { id: 'guest-1', name: 'Guest' };

/** A runtime whose model is a local OpenAI-compatible fake that answers every call with HTTP 404. */
async function startFailingModel(logs: string[]): Promise<Harness> {
  fake = await startOpenAIFake(() => ({ status: 404, errorMessage: 'no such model' }));
  const input = {
    agents: { defaults: { model: 'local/missing-model' } },
    models: { providers: { local: { kind: 'openai-compatible' as const, baseURL: fake.baseURL } } },
  };
  const models = createModelRouter(resolveConfig(input), {});
  const record = (_obj: unknown, msg?: string) => {
    logs.push(`${JSON.stringify(_obj)} ${msg ?? ''}`);
  };
  return startHarness({
    config: input,
    models,
    isOwner: (inbound) => inbound.sender.id === OWNER.id,
    logger: {
      debug: () => {},
      info: () => {},
      warn: record,
      error: record,
      child() {
        return this;
      },
    },
  });
}

describe('error notices of failed model calls', () => {
  it('tell a guest only that the owner has the details, with no URL or config key', async () => {
    const logs: string[] = [];
    harness = await startFailingModel(logs);
    await harness.channel.inject({ text: 'hello?', sender: GUEST });
    const [notice] = await harness.channel.waitForSent(1);
    expect(notice!.text).toBe('Sorry, I could not answer just now; the owner has the details.');
    expect(notice!.text).not.toContain(fake!.baseURL);
    expect(notice!.text).not.toContain('models.providers');
    const [run] = await harness.store.listRuns({ sessionKey: 'agent:main:memory:dm:guest-1' });
    expect(run).toMatchObject({
      status: 'error',
      error: expect.stringContaining('models.providers.local.baseURL'),
    });
    expect(logs.join('\n')).toContain('models.providers.local.baseURL');
  });

  it('show the owner the details', async () => {
    harness = await startFailingModel([]);
    await harness.channel.inject({ text: 'hello?', sender: OWNER });
    const [notice] = await harness.channel.waitForSent(1);
    expect(notice!.text).toContain('The agent could not answer');
    expect(notice!.text).toContain('HTTP 404');
    expect(notice!.text).toContain('models.providers.local.baseURL');
  });
});
