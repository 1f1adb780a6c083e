import type { ProviderHealth } from '@colloquy/runtime';

/**
 * One line of `colloquy status` for a model provider: whether it answers (its circuit breaker) and
 * its calls (its limiter).
 *
 * @param id - the provider id (its key under `models.providers`)
 * @param health - its figures, as `run.json` holds them
 * @param ageMs - how old the figures are (`run.json` is refreshed every few seconds)
 * @returns the line, without indentation
 */
export function describeProvider(id: string, health: ProviderHealth, ageMs: number): string {
  const { limiter } = health;
  const calls = [
    `${limiter.active} ${limiter.active === 1 ? 'call' : 'calls'} in flight`,
    `${limiter.waiting} waiting`,
    ...(limiter.pausedForMs > ageMs ? [`paused ${seconds(limiter.pausedForMs - ageMs)} s after a 429`] : []),
  ].join(', ');
  return `${id}: ${circuitState(health, ageMs)} (${calls})`;
}

/**
 * The sentences `/healthz` shows for providers that do not answer: those whose circuit breaker is
 * open or probing. A provider whose circuit is closed is not reported, even after a failure.
 *
 * @param providers - the health of each provider by id
 * @returns one sentence per provider that does not answer
 */
export function providerProblems(providers: Readonly<Record<string, ProviderHealth>>): string[] {
  return Object.entries(providers)
    .filter(([, health]) => health.circuit.state !== 'closed')
    .map(
      ([id, health]) =>
        `the model provider ${id} is not answering: ${circuitState(health, 0)}; turns wait and run once it is back.`,
    );
}

/** The circuit breaker's state in words; `ageMs` is taken off the wait left. */
function circuitState({ circuit }: ProviderHealth, ageMs: number): string {
  const failures = `${circuit.consecutiveFailures} ${circuit.consecutiveFailures === 1 ? 'failure' : 'failures'} in a row`;
  switch (circuit.state) {
    case 'closed':
      return circuit.consecutiveFailures === 0 ? 'answering' : `answering, after ${failures}`;
    case 'open':
      return `circuit open after ${failures}, calls fail at once until a probe in ${seconds(circuit.retryAfterMs - ageMs)} s`;
    case 'half-open':
      return `circuit half-open after ${failures}, one call probes whether it is back`;
  }
}

/** Whole seconds, rounded up, never negative. */
function seconds(ms: number): number {
  return Math.max(0, Math.ceil(ms / 1000));
}
