import { describe, expect, it } from 'vitest';
import { type CircuitTransition, createCircuitBreaker } from './circuit-breaker.js';

function rig(options = { failureThreshold: 3, coolDownMs: 1000 }) {
  let t = 0;
  const transitions: CircuitTransition[] = [];
  const breaker = createCircuitBreaker(
    options,
    (x) => transitions.push(x),
    () => t,
  );
  return {
    breaker,
    transitions,
    advance(ms: number) {
      t += ms;
    },
    /** Admits a call and reports it failed. */
    fail() {
      const admission = breaker.admit();
      if (!admission.ok) throw new Error('refused');
      breaker.failed(admission.probe);
    },
  };
}

describe('createCircuitBreaker', () => {
  it('stays closed below the threshold, and a success resets the count', () => {
    const { breaker, fail, transitions } = rig();
    fail();
    fail();
    breaker.succeeded(false);
    fail();
    fail();
    expect(breaker.stats()).toEqual({ state: 'closed', consecutiveFailures: 2, retryAfterMs: 0 });
    expect(transitions).toEqual([]);
  });

  it('opens after the threshold and refuses calls at once for the cool-down', () => {
    const { breaker, fail, advance, transitions } = rig();
    fail();
    fail();
    fail();
    expect(transitions).toEqual([{ from: 'closed', to: 'open', consecutiveFailures: 3 }]);
    advance(400);
    expect(breaker.admit()).toEqual({ ok: false, state: 'open', retryAfterMs: 600 });
    expect(breaker.admit()).toEqual({ ok: false, state: 'open', retryAfterMs: 600 });
    expect(breaker.stats()).toMatchObject({ state: 'open', retryAfterMs: 600 });
    expect(transitions).toHaveLength(1);
  });

  it('lets exactly one probe through after the cool-down, and closes when it succeeds', () => {
    const { breaker, fail, advance, transitions } = rig();
    for (let i = 0; i < 3; i++) fail();
    advance(1000);
    expect(breaker.admit()).toEqual({ ok: true, probe: true });
    expect(breaker.admit()).toMatchObject({ ok: false, state: 'half-open' });
    expect(breaker.stats().state).toBe('half-open');
    breaker.succeeded(true);
    expect(breaker.admit()).toEqual({ ok: true, probe: false });
    expect(breaker.stats()).toEqual({ state: 'closed', consecutiveFailures: 0, retryAfterMs: 0 });
    expect(transitions.map((x) => `${x.from}>${x.to}`)).toEqual([
      'closed>open',
      'open>half-open',
      'half-open>closed',
    ]);
  });

  it('opens again for a whole cool-down when the probe fails', () => {
    const { breaker, fail, advance, transitions } = rig();
    for (let i = 0; i < 3; i++) fail();
    advance(1000);
    fail();
    expect(breaker.admit()).toEqual({ ok: false, state: 'open', retryAfterMs: 1000 });
    expect(transitions.map((x) => `${x.from}>${x.to}`)).toEqual([
      'closed>open',
      'open>half-open',
      'half-open>open',
    ]);
  });

  it('frees the probe slot when the probe ends saying nothing about the provider', () => {
    const { breaker, fail, advance } = rig();
    for (let i = 0; i < 3; i++) fail();
    advance(1000);
    const probe = breaker.admit();
    expect(probe).toEqual({ ok: true, probe: true });
    breaker.settled(true);
    expect(breaker.stats().state).toBe('half-open');
    expect(breaker.admit()).toEqual({ ok: true, probe: true });
  });

  it('takes its defaults when given no options', () => {
    let t = 0;
    const breaker = createCircuitBreaker({}, undefined, () => t);
    for (let i = 0; i < 4; i++) breaker.failed(false);
    expect(breaker.stats().state).toBe('closed');
    breaker.failed(false);
    expect(breaker.stats()).toMatchObject({ state: 'open', retryAfterMs: 30_000 });
    t += 30_000;
    expect(breaker.admit()).toEqual({ ok: true, probe: true });
  });
});
