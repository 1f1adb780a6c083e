import { type ColloquyConfigInput, resolveConfig } from '@colloquy/core';
import {
  fakeReply,
  type OpenAIFake,
  type RecordedRequest,
  startOpenAIFake,
} from '@colloquy/testkit/openai-fake';
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

const USERS = 50;
const LATENCY_MS = 300;
/** How long a gated request waits for the others before the gate gives up (see `start`). */
const GATE_GIVE_UP_MS = 5_000;

/**
 * A runtime on default lanes whose model is the local OpenAI fake answering after `LATENCY_MS`, or
 * when `gate` is given, answering no request before `gate` has arrived at once (or one of them has
 * waited `GATE_GIVE_UP_MS`, after which it answers everything as it comes).
 */
async function start(
  limits?: { concurrency: number },
  gate?: number,
): Promise<{ harness: Harness; fake: OpenAIFake }> {
  let open: () => void = () => undefined;
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  fake = await startOpenAIFake(async () => {
    if (gate !== undefined) {
      if (fake!.requests.length >= gate) open();
      await Promise.race([opened, new Promise((resolve) => setTimeout(resolve, GATE_GIVE_UP_MS))]);
      open();
    }
    return fakeReply.text('hello', { delayMs: LATENCY_MS });
  });
  const input: ColloquyConfigInput = {
    agents: { defaults: { model: 'local/fake-model' } },
    models: {
      providers: {
        local: { kind: 'openai-compatible', baseURL: fake.baseURL, ...(limits ? { limits } : {}) },
      },
    },
  };
  harness = await startHarness({ config: input, models: createModelRouter(resolveConfig(input)) });
  return { harness, fake };
}

/** The most requests open at one instant, from the fake's timestamps (ends before starts at a tie). */
function overlapFromTimestamps(requests: readonly RecordedRequest[]): number {
  const events = requests.flatMap((r) => [
    [r.receivedAt, 1],
    [r.answeredAt ?? Number.POSITIVE_INFINITY, -1],
  ]);
  events.sort((a, b) => a[0]! - b[0]! || a[1]! - b[1]!);
  let open = 0;
  let most = 0;
  for (const [, delta] of events) {
    open += delta!;
    most = Math.max(most, open);
  }
  return most;
}

async function fiftyUsersOneMessageEach(h: Harness): Promise<void> {
  await Promise.all(
    Array.from({ length: USERS }, (_, i) =>
      h.channel.inject({ text: `hi from ${i}`, sender: { id: `user-${i}`, name: `User ${i}` } }),
    ),
  );
  await h.channel.waitForSent(USERS, 20_000);
}

describe('many sessions at once (default lanes)', () => {
  it('runs the turns of 50 users at the same time instead of four by four', async () => {
    // No model call is answered until all 50 are open: a runtime that ran them four by four would
    // hold only four when the gate gives up.
    const { harness: h, fake: f } = await start(undefined, USERS);
    await fiftyUsersOneMessageEach(h);

    const chats = new Set(h.channel.sent.map((m) => m.to.to));
    expect(chats.size).toBe(USERS);
    expect(f.requests).toHaveLength(USERS);
    // Every model call started before the first one was answered: all 50 turns overlapped.
    const lastStart = Math.max(...f.requests.map((r) => r.receivedAt));
    const firstEnd = Math.min(...f.requests.map((r) => r.answeredAt ?? Number.POSITIVE_INFINITY));
    expect(lastStart).toBeLessThan(firstEnd);
    expect(overlapFromTimestamps(f.requests)).toBe(USERS);
    expect(f.maxInFlight).toBe(USERS);
  });

  it('keeps the model calls of a provider within models.providers.<id>.limits.concurrency', async () => {
    const { harness: h, fake: f } = await start({ concurrency: 10 });
    await fiftyUsersOneMessageEach(h);

    expect(new Set(h.channel.sent.map((m) => m.to.to)).size).toBe(USERS);
    expect(f.requests).toHaveLength(USERS);
    expect(f.maxInFlight).toBe(10);
    const overlap = overlapFromTimestamps(f.requests);
    expect(overlap).toBeGreaterThan(1);
    expect(overlap).toBeLessThanOrEqual(10);
  });
});
