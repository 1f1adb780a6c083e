import { type Logger, resolveConfig } from '@colloquy/core';
import type { ModelProviderConfig } from '@colloquy/core/model';
import { fakeReply, type OpenAIFake, startOpenAIFake } from '@colloquy/testkit/openai-fake';
import { afterEach, describe, expect, it } from 'vitest';
import { OUTAGE_NOTICE } from '../src/agent/provider-outage.js';
import { BUSY_NOTICE } from '../src/inbound/admit-inbound.js';
import { createModelRouter } from '../src/index.js';
import { type Harness, startHarness, waitFor } from './support/harness.js';

let harness: Harness | undefined;
let fake: OpenAIFake | undefined;
afterEach(async () => {
  await harness?.close();
  await fake?.close();
  harness = undefined;
  fake = undefined;
});

const USERS = 6;
/** Messages each user sends while the provider is down, after the first one. */
const HELD = 3;

/** A config whose default model is `local/gpt-test` of the provider `local`. */
function withProvider(local: ModelProviderConfig) {
  return { agents: { defaults: { model: 'local/gpt-test' } }, models: { providers: { local } } };
}

/** A logger that records the message of each info and warning line. */
function recording(lines: string[]): Logger {
  const logger: Logger = {
    debug: () => {},
    info: (_obj, msg) => lines.push(msg ?? ''),
    warn: (_obj, msg) => lines.push(msg ?? ''),
    error: () => {},
    child: () => logger,
  };
  return logger;
}

describe('a model provider that is slow, then dead, then back', () => {
  it('gives each chat one apology, keeps what came in while it was down, and answers it after recovery', async () => {
    let state: 'slow-then-dead' | 'healthy' = 'slow-then-dead';
    fake = await startOpenAIFake((request) => {
      if (state === 'healthy') {
        const last = request.body.messages.at(-1)?.content;
        return fakeReply.text(`answer to ${typeof last === 'string' ? last : JSON.stringify(last)}`);
      }
      // The first calls hang past the first-byte deadline; then the server answers 503.
      return request.index < 3 ? { text: 'too late', delayMs: 5_000 } : fakeReply.serverError(503);
    });
    const input = withProvider({
      kind: 'openai-compatible',
      baseURL: fake.baseURL,
      timeouts: { firstByteMs: 200 },
      circuitBreaker: { failureThreshold: 3, coolDownMs: 250 },
    });
    const providerLog: string[] = [];
    const models = createModelRouter(resolveConfig(input), {
      retry: { maxRetries: 0 },
      logger: recording(providerLog),
    });
    harness = await startHarness({ config: input, models });
    const { channel, store } = harness;
    const users = Array.from({ length: USERS }, (_, i) => ({ id: `user-${i}`, name: `User ${i}` }));
    const sessionOf = (id: string) => `agent:main:memory:dm:${id}`;

    // Each user writes once: the calls time out, the circuit opens, and every chat is told once.
    await Promise.all(users.map((sender) => channel.inject({ text: `${sender.id} first`, sender })));
    await channel.waitForSent(USERS, 10_000);
    expect(models.health().local?.circuit.state).not.toBe('closed');

    // More messages while the provider is down: acknowledged and stored, held, and never apologised for again.
    for (let m = 1; m <= HELD; m++) {
      await Promise.all(users.map((sender) => channel.inject({ text: `${sender.id} msg ${m}`, sender })));
    }
    // Once every message sent while down has had its turn tried, each chat still has only its one apology.
    const laterRuns = async () =>
      (await Promise.all(users.map((user) => store.listRuns({ sessionKey: sessionOf(user.id) })))).flatMap(
        (runs) => runs.filter((run) => !run.message.endsWith(' first')),
      );
    await waitFor(
      async () => (await laterRuns()).every((run) => run.attempts > 0),
      5_000,
      'every later message tried',
    );
    for (const user of users) expect(channel.textsTo(user.id)).toEqual([OUTAGE_NOTICE]);
    // The held turns come back after each cool-down: a probe meets the dead server.
    const requestsWhileDown = fake.requests.length;
    await waitFor(() => fake!.requests.length > requestsWhileDown, 5_000, 'a probe while down');
    for (const user of users) {
      const held = await store.listRuns({ sessionKey: sessionOf(user.id), statuses: ['queued', 'running'] });
      expect(held).toHaveLength(HELD);
    }

    // The provider is back: the next probe closes the circuit and every held turn is answered.
    state = 'healthy';
    await waitFor(
      async () => {
        for (const user of users) {
          const runs = await store.listRuns({ sessionKey: sessionOf(user.id) });
          if (runs.some((run) => run.status === 'queued' || run.status === 'running')) return false;
          // A turn's end is stored before its reply is sent: wait for the send to be recorded too.
          const sending = (run: (typeof runs)[number]) =>
            (run.meta?.delivery as { status?: string } | undefined)?.status === 'sending';
          if (runs.some(sending)) return false;
        }
        return true;
      },
      10_000,
      'every held turn answered and its reply sent',
    );

    for (const user of users) {
      const texts = channel.textsTo(user.id);
      // One apology, then the answers; the held messages may have been folded into fewer turns.
      expect(texts[0]).toBe(OUTAGE_NOTICE);
      expect(texts.filter((text) => text === OUTAGE_NOTICE)).toHaveLength(1);
      expect(texts.at(-1)).toBe(`answer to ${user.id} msg ${HELD}`);
      const runs = await store.listRuns({ sessionKey: sessionOf(user.id) });
      expect(runs).toHaveLength(1 + HELD);
      // Only the first turn failed (with the apology); nothing that came in while down failed.
      expect(runs.filter((run) => run.status === 'error').map((run) => run.message)).toEqual([
        `${user.id} first`,
      ]);
      expect(runs.filter((run) => run.status === 'done')).toHaveLength(HELD);
      // Nothing acknowledged is lost: every message is in the transcript, once.
      const said = (await store.readTail(sessionOf(user.id), 100))
        .filter((message) => message.role === 'user')
        .map((message) => message.content);
      expect(said).toEqual([
        `${user.id} first`,
        ...Array.from({ length: HELD }, (_, m) => `${user.id} msg ${m + 1}`),
      ]);
    }
    expect(models.health().local?.circuit).toEqual({
      state: 'closed',
      consecutiveFailures: 0,
      retryAfterMs: 0,
    });

    // Each change of the circuit's state was logged once: opened, then probes, then closed once.
    const transitions = providerLog.filter((line) => line.startsWith('model provider circuit'));
    const kinds = transitions.map((line) => line.split(':')[0]!.replace('model provider circuit ', ''));
    expect(kinds.join(' ')).toMatch(/^opened( half-open opened)* half-open closed$/);
  }, 60_000);
});

describe('a message that comes in while turns of its chat are held', () => {
  it('waits with the held turns and is answered with them, once, after the provider is back', async () => {
    let healthy = false;
    fake = await startOpenAIFake((request) => {
      if (!healthy) return fakeReply.serverError(503);
      const last = request.body.messages.at(-1);
      return fakeReply.text(`answer to ${last?.role} ${JSON.stringify(last?.content)}`);
    });
    // Failures that leave the circuit closed: the held turn waits one cool-down, and the provider
    // is back long before it is over.
    const input = withProvider({
      kind: 'openai-compatible',
      baseURL: fake.baseURL,
      circuitBreaker: { failureThreshold: 100, coolDownMs: 700 },
    });
    const models = createModelRouter(resolveConfig(input), { retry: { maxRetries: 0 } });
    harness = await startHarness({ config: input, models });
    const { channel, store } = harness;
    const sender = { id: 'held-user', name: 'Held' };
    const sessionKey = 'agent:main:memory:dm:held-user';

    await channel.inject({ text: 'first', sender });
    await channel.waitForSent(1);
    await channel.inject({ text: 'msg 1', sender });
    await waitFor(
      async () => (await store.listRuns({ sessionKey, statuses: ['queued'] })).length === 1,
      5_000,
      'the turn of msg 1 held',
    );
    const requestsWhileDown = fake.requests.length;
    healthy = true;
    await channel.inject({ text: 'msg 2', sender });
    await waitFor(
      async () => (await store.listRuns({ sessionKey, statuses: ['queued', 'running'] })).length === 0,
      5_000,
      'the held turn and msg 2 answered',
    );

    // One model call answers both, with msg 2 last: msg 2 did not run ahead of the held msg 1.
    expect(fake.requests.length - requestsWhileDown).toBe(1);
    expect(channel.textsTo(sender.id)).toEqual([OUTAGE_NOTICE, 'answer to user "msg 2"']);
    const said = (await store.readTail(sessionKey, 100)).map((m) => `${m.role} ${m.content}`);
    expect(said).toEqual(['user first', 'user msg 1', 'user msg 2', 'assistant answer to user "msg 2"']);
    const runs = await store.listRuns({ sessionKey, statuses: ['done'] });
    expect(runs.map((run) => run.message).sort()).toEqual(['msg 1', 'msg 2']);
  }, 30_000);
});

describe('the admission limit of a chat', () => {
  it('stores a message over runtime.maxQueuedPerSession without queuing it, and says busy once', async () => {
    let healthy = false;
    fake = await startOpenAIFake(() =>
      healthy ? fakeReply.text('all answered') : fakeReply.serverError(503),
    );
    const input = {
      ...withProvider({
        kind: 'openai-compatible',
        baseURL: fake.baseURL,
        circuitBreaker: { failureThreshold: 1, coolDownMs: 200 },
      }),
      runtime: { maxQueuedPerSession: 3 },
    };
    const models = createModelRouter(resolveConfig(input), { retry: { maxRetries: 0 } });
    harness = await startHarness({ config: input, models });
    const { channel, store } = harness;
    const sender = { id: 'busy-user', name: 'Busy' };
    const sessionKey = 'agent:main:memory:dm:busy-user';

    await channel.inject({ text: 'first', sender });
    await channel.waitForSent(1);
    const outcomes = [];
    for (let m = 1; m <= 6; m++)
      outcomes.push(await harness.runtime.receive(channel.toInbound({ text: `msg ${m}`, sender })));
    expect(outcomes.map((outcome) => outcome.action)).toEqual([
      'queued',
      'queued',
      'queued',
      'busy',
      'busy',
      'busy',
    ]);
    await channel.waitForSent(2);
    expect(channel.textsTo(sender.id)).toEqual([OUTAGE_NOTICE, BUSY_NOTICE]);

    // Every acknowledged message is stored; the refused ones as runs that ended at once.
    const runs = await store.listRuns({ sessionKey });
    expect(runs).toHaveLength(7);
    const refused = runs.filter((run) => run.error?.startsWith('Not queued'));
    expect(refused.map((run) => run.message).sort()).toEqual(['msg 4', 'msg 5', 'msg 6']);

    // Once the provider is back the admitted ones are answered, and the chat takes messages again.
    healthy = true;
    await waitFor(
      async () => (await store.listRuns({ sessionKey, statuses: ['queued', 'running'] })).length === 0,
      10_000,
      'the admitted messages answered',
    );
    expect(
      (await store.listRuns({ sessionKey, statuses: ['done'] })).map((run) => run.message).sort(),
    ).toEqual(['msg 1', 'msg 2', 'msg 3']);
    expect((await harness.runtime.receive(channel.toInbound({ text: 'later', sender }))).action).toBe(
      'queued',
    );
  }, 30_000);

  it("counts the turns waiting in this process's queue: a chat whose turn is slow is busy at the limit", async () => {
    let release: () => void = () => {};
    const answering = new Promise<void>((resolve) => {
      release = resolve;
    });
    harness = await startHarness({
      script: async () => {
        await answering;
        return 'done at last';
      },
      config: { runtime: { maxQueuedPerSession: 3 } },
    });
    const { channel, store } = harness;
    const sender = { id: 'slow-user', name: 'Slow' };
    const sessionKey = 'agent:main:memory:dm:slow-user';
    const receive = (text: string) => harness!.runtime.receive(channel.toInbound({ text, sender }));

    // One turn runs (and waits for the model), two wait behind it: the third is one too many.
    expect((await receive('one')).action).toBe('queued');
    await harness.model.waitForRequests(1);
    expect((await receive('two')).action).toBe('queued');
    expect((await receive('three')).action).toBe('queued');
    expect((await receive('four')).action).toBe('busy');
    expect((await receive('five')).action).toBe('busy');
    await channel.waitForSent(1);
    expect(channel.textsTo(sender.id)).toEqual([BUSY_NOTICE]);

    release();
    await waitFor(
      async () => (await store.listRuns({ sessionKey, statuses: ['queued', 'running'] })).length === 0,
      5_000,
      'the admitted messages answered',
    );
    expect((await receive('six')).action).toBe('queued');
    const ended = await store.listRuns({ sessionKey });
    expect(
      ended
        .filter((run) => run.status === 'error')
        .map((run) => run.message)
        .sort(),
    ).toEqual(['five', 'four']);
  });
});
