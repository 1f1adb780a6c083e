import type { ProviderHealth } from '@colloquy/runtime';
import { describe, expect, it } from 'vitest';
import { describeProvider, providerProblems } from './provider-health.js';

const idle = { active: 0, waiting: 0, pausedForMs: 0 };
const closed: ProviderHealth = {
  limiter: { active: 1, waiting: 0, pausedForMs: 0 },
  circuit: { state: 'closed', consecutiveFailures: 0, retryAfterMs: 0 },
};
const open: ProviderHealth = {
  limiter: idle,
  circuit: { state: 'open', consecutiveFailures: 5, retryAfterMs: 12_000 },
};
const probing: ProviderHealth = {
  limiter: { active: 1, waiting: 0, pausedForMs: 0 },
  circuit: { state: 'half-open', consecutiveFailures: 5, retryAfterMs: 0 },
};

describe('provider health', () => {
  it('says whether a provider answers, with its calls', () => {
    expect(describeProvider('local', closed, 0)).toBe('local: answering (1 call in flight, 0 waiting)');
    expect(
      describeProvider('local', { ...closed, circuit: { ...closed.circuit, consecutiveFailures: 2 } }, 0),
    ).toBe('local: answering, after 2 failures in a row (1 call in flight, 0 waiting)');
    expect(
      describeProvider('cloud', { ...closed, limiter: { active: 3, waiting: 7, pausedForMs: 30_000 } }, 0),
    ).toBe('cloud: answering (3 calls in flight, 7 waiting, paused 30 s after a 429)');
  });

  it('counts the wait of an open circuit from when the figures were taken', () => {
    expect(describeProvider('local', open, 0)).toBe(
      'local: circuit open after 5 failures in a row, calls fail at once until a probe in 12 s (0 calls in flight, 0 waiting)',
    );
    expect(describeProvider('local', open, 5_000)).toContain('until a probe in 7 s');
    expect(describeProvider('local', open, 60_000)).toContain('until a probe in 0 s');
    expect(describeProvider('local', probing, 0)).toBe(
      'local: circuit half-open after 5 failures in a row, one call probes whether it is back (1 call in flight, 0 waiting)',
    );
  });

  it('reports only the providers whose circuit is open or probing as problems', () => {
    expect(providerProblems({ local: closed })).toEqual([]);
    expect(providerProblems({ local: closed, cloud: open, other: probing })).toEqual([
      'the model provider cloud is not answering: circuit open after 5 failures in a row, calls fail at once until a probe in 12 s; turns wait and run once it is back.',
      'the model provider other is not answering: circuit half-open after 5 failures in a row, one call probes whether it is back; turns wait and run once it is back.',
    ]);
  });
});
