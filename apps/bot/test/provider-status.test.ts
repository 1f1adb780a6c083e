import { fakeReply, type OpenAIFake, startOpenAIFake } from '@colloquy/testkit/openai-fake';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AppProcess, type CliRun, runCliProcess, startApp } from './support/app-process.js';
import { eventually } from './support/bot-fixture.js';

let fake: OpenAIFake;
let app: AppProcess;
let healthy = false;

/** The CLI in the app's directory (it finds colloquy.json5 there) with the app's state dir. */
const cli = (...args: string[]) => runCliProcess([...args, '--state-dir', 'state'], { cwd: app.dir });

/** Runs `colloquy status` until its output holds `text` (run.json is refreshed every 5 s). */
const statusSaying = (text: string) =>
  eventually(async () => {
    const run: CliRun = await cli('status');
    return run.stdout.includes(text) ? run : undefined;
  }, 30_000);

const health = async () => {
  const res = await fetch(new URL('healthz', app.webchatUrl));
  return `${res.status} ${await res.text()}`;
};

beforeAll(async () => {
  fake = await startOpenAIFake(() => (healthy ? fakeReply.text('pong') : fakeReply.serverError(503)));
  app = await startApp({
    agents: { defaults: { model: 'local/test-model' } },
    models: {
      providers: {
        local: {
          kind: 'openai-compatible',
          baseURL: fake.baseURL,
          circuitBreaker: { failureThreshold: 1, coolDownMs: 3_000 },
        },
      },
    },
  });
}, 30_000);

afterAll(async () => {
  await app?.cleanup();
  await fake?.close();
});

describe('a model provider that stops answering, seen by the owner', () => {
  it('shows its circuit breaker in colloquy status and /healthz, and shows it answering again', async () => {
    expect(await health()).toBe('200 ok\n');
    // The provider answers 503 (retried, then counted once): its circuit opens.
    await cli('sessions', 'send', 'main', 'hello', '--timeout', '20');
    expect(await health()).toMatch(
      /^503 unhealthy: the model provider local is not answering: circuit open after 1 failure in a row, calls fail at once until a probe in \d s; turns wait and run once it is back\.\n$/,
    );
    const open = await statusSaying('Provider: local: circuit open after 1 failure in a row');
    expect(open.code).toBe(0);
    expect(open.stdout).toMatch(/Provider: local: circuit open .* \(0 calls in flight, 0 waiting\)/);
    const json = JSON.parse((await cli('status', '--json')).stdout) as {
      providers?: Record<string, { circuit: { state: string }; limiter: { active: number } }>;
    };
    expect(json.providers?.local).toMatchObject({ circuit: { state: 'open' }, limiter: { active: 0 } });

    // Once the cool-down is over the next call probes; the provider is back, so it closes.
    await statusSaying('until a probe in 0 s');
    healthy = true;
    const answered = await cli('sessions', 'send', 'main', 'again', '--timeout', '20');
    expect(answered.stdout.trim()).toBe('pong');
    expect(await health()).toBe('200 ok\n');
    await statusSaying('Provider: local: answering (0 calls in flight, 0 waiting)');
  }, 90_000);
});
