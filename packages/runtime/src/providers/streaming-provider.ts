import { backoffDelay, ColloquyError, silentLogger } from '@colloquy/core';
import { sleep } from '@colloquy/core/internal';
import type { ModelMessage, ModelProvider, ModelRequest, ModelStreamEvent } from '@colloquy/core/model';
import type { AiSdkProviderSpec } from './ai-sdk-provider.js';
import { type CallDeadlines, PROVIDER_TIMEOUT_DEFAULTS, startCallDeadlines } from './call-deadlines.js';
import { type CircuitBreakerStats, createCircuitBreaker } from './circuit-breaker.js';
import {
  circuitOpenError,
  classifyModelError,
  isProviderFailure,
  type ModelErrorContext,
} from './model-errors.js';
import { stripProviderPrefix } from './model-ref.js';
import type { DirectPart } from './model-stream.js';
import type { ModelRetryOptions } from './provider-config.js';
import { createProviderLimiter, type ProviderLimiterStats, type ProviderPermit } from './provider-limiter.js';

/** Defaults of the provider options. */
export const MODEL_PROVIDER_DEFAULTS = {
  idleTimeoutMs: PROVIDER_TIMEOUT_DEFAULTS.idleMs,
  retry: { maxRetries: 2, baseDelayMs: 500, maxRetryAfterMs: 20_000 },
} as const;

/** How a provider is doing: its limiter and its circuit breaker, for status output. */
export interface ProviderHealth {
  /** Calls in flight, waiting, and the time left of a 429 pause. */
  limiter: ProviderLimiterStats;
  /** The circuit breaker's state, failures in a row, and the time until an open one probes. */
  circuit: CircuitBreakerStats;
}

/** A `ModelProvider` that reports its health. */
export interface MonitoredModelProvider extends ModelProvider {
  /** The provider's limiter and circuit breaker figures, now. */
  health(): ProviderHealth;
}

/** One model call, ready to run: each attempt calls it with that attempt's abort signal. */
export type ModelCall = (abortSignal: AbortSignal) => AsyncIterable<DirectPart>;

/**
 * What {@link createStreamingProvider} wraps: how to prepare a call, and how to describe the
 * provider (the fields of the public `AiSdkProviderSpec` that are not about the AI SDK).
 */
export type StreamingProviderSpec = Omit<
  AiSdkProviderSpec,
  'languageModel' | 'providerOptions' | 'keepSignedThinking'
> & {
  /**
   * Prepares the call of a request (its model id without the `<id>/` prefix), once per request;
   * the returned function runs one attempt.
   */
  prepare(request: ModelRequest, modelId: string): ModelCall | Promise<ModelCall>;
};

/**
 * A `ModelProvider` around a model call: bounded retries before any output is streamed, each
 * attempt passing the provider's circuit breaker (refused at once while the provider is down) and
 * waiting for its limits (a 429 pauses every call of the provider for its retry-after), deadlines
 * for the first part, between parts and for the whole call, and failures turned into `ColloquyError`s.
 *
 * @param spec - see {@link StreamingProviderSpec}
 * @returns a `ModelProvider` whose `streamTurn` yields `text-delta`, `tool-call` and a final `finish`
 * @throws (from `streamTurn`) ColloquyError `MODEL_ERROR` (`reason: 'circuit-open'` with
 *   `details.retryAfterMs` while the circuit is open), `RATE_LIMITED` (`details.retryAfterMs`),
 *   `TIMEOUT` or `ABORTED`; `details.reason` says more (see `ModelFailureReason`)
 */
export function createStreamingProvider(spec: StreamingProviderSpec): MonitoredModelProvider {
  const retry = { ...MODEL_PROVIDER_DEFAULTS.retry, ...spec.retry };
  const idleMs = spec.timeouts?.idleMs ?? spec.idleTimeoutMs ?? PROVIDER_TIMEOUT_DEFAULTS.idleMs;
  const timeouts = {
    idleMs,
    firstByteMs: spec.timeouts?.firstByteMs ?? idleMs,
    totalMs: spec.timeouts?.totalMs ?? PROVIDER_TIMEOUT_DEFAULTS.totalMs,
  };
  const log = (spec.logger ?? silentLogger).child({ provider: spec.id });
  const limiter = createProviderLimiter(spec.limits);
  // Logged once per change of state, not once per call.
  const breaker = createCircuitBreaker(spec.circuitBreaker, ({ from, to, consecutiveFailures }) => {
    const fields = { from, to, consecutiveFailures };
    if (to === 'open')
      log.warn(fields, 'model provider circuit opened: calls fail at once until it cools down');
    else if (to === 'half-open') log.info(fields, 'model provider circuit half-open: one call probes');
    else log.info(fields, 'model provider circuit closed: the provider answers again');
  });
  const countTokens = spec.limits?.tokensPerMinute !== undefined;

  return {
    id: spec.id,
    health: () => ({ limiter: limiter.stats(), circuit: breaker.stats() }),
    async *streamTurn(request: ModelRequest): AsyncGenerator<ModelStreamEvent> {
      const modelId = stripProviderPrefix(spec.id, request.model);
      const call = await spec.prepare(request, modelId);
      const estimatedTokens = countTokens ? estimatePromptTokens(request) : 0;

      for (let attempt = 1; ; attempt++) {
        const ctx: ModelErrorContext = {
          provider: spec.id,
          model: modelId,
          attempts: attempt,
          partial: false,
          ...(spec.baseURL ? { baseURL: spec.baseURL } : {}),
          ...(spec.apiKeyEnv ? { apiKeyEnv: spec.apiKeyEnv } : {}),
        };
        // No waiting on a dead host: while the circuit is open the call fails before it queues.
        const admission = breaker.admit();
        if (!admission.ok) throw circuitOpenError(ctx, admission.retryAfterMs);
        const probe = admission.probe;
        let breakerTold = false;
        const tellBreaker = (outcome: 'succeeded' | 'failed' | 'settled') => {
          if (breakerTold) return;
          breakerTold = true;
          breaker[outcome](probe);
        };
        const attemptAbort = new AbortController();
        const onCallerAbort = () => attemptAbort.abort(request.signal?.reason);
        if (request.signal?.aborted) onCallerAbort();
        request.signal?.addEventListener('abort', onCallerAbort, { once: true });
        let deadlines: CallDeadlines | undefined;
        const abortState = () => {
          if (request.signal?.aborted) return { by: 'caller', reason: request.signal.reason } as const;
          const missed = deadlines?.missed();
          return missed ? ({ by: 'timeout', ...missed } as const) : undefined;
        };

        let permit: ProviderPermit | undefined;
        let usedTokens: number | undefined;
        let streamRead = false;
        try {
          permit = await limiter.acquire({
            signal: request.signal,
            tokens: estimatedTokens,
            maxPauseMs: retry.maxRetryAfterMs,
            onLongPause: (ms) => pausedError(ctx, ms),
          });
          deadlines = startCallDeadlines(timeouts, ({ kind, timeoutMs }) =>
            attemptAbort.abort(
              new DOMException(`${kind} deadline of ${timeoutMs} ms missed`, 'TimeoutError'),
            ),
          );
          let finish: ModelStreamEvent | undefined;
          for await (const part of call(attemptAbort.signal)) {
            deadlines.partArrived(); // the consumer's time between parts does not count
            switch (part.type) {
              case 'text-delta':
                if (part.text.length === 0) break;
                ctx.partial = true;
                yield part;
                break;
              case 'tool-call':
                ctx.partial = true;
                yield part;
                break;
              case 'finish':
                finish = part;
                usedTokens = part.usage.totalTokens;
                break;
            }
            deadlines.awaitNext();
          }
          streamRead = true;
          if (abortState()) throw new DOMException('aborted', 'AbortError');
          if (!finish) {
            throw new ColloquyError(
              'MODEL_ERROR',
              `The stream from model "${modelId}" of provider "${spec.id}" ended without a finish event.`,
              { provider: spec.id, model: modelId, reason: 'stream-interrupted', partial: ctx.partial },
            );
          }
          tellBreaker('succeeded');
          yield finish;
          return;
        } catch (thrown) {
          const classified = classifyModelError(thrown, ctx, abortState());
          if (isProviderFailure(classified.reason)) {
            tellBreaker('failed');
            // The caller learns whether the provider now counts as down (see the README, Errors).
            classified.error.details.circuit = breaker.stats().state;
          } else {
            tellBreaker('settled');
          }
          const delayMs = retryDelay(classified, attempt, retry);
          const rateLimited = classified.reason === 'rate-limited';
          // A 429 is about the provider, not this call: hold every call of the provider that long.
          if (rateLimited) limiter.pause(classified.retryAfterMs ?? delayMs ?? 0);
          permit?.release(usedTokens);
          if (delayMs === undefined) {
            if (classified.reason !== 'aborted') {
              log.warn(
                { err: classified.error.message, attempt, reason: classified.reason },
                'model call failed',
              );
            }
            throw classified.error;
          }
          log.warn(
            { err: classified.error.message, attempt, reason: classified.reason, delayMs },
            'model call failed; retrying',
          );
          if (!rateLimited) await waitToRetry(delayMs, request.signal, ctx); // else the next acquire waits out the pause
        } finally {
          permit?.release(usedTokens);
          tellBreaker('settled'); // the consumer stopped early: nothing learnt about the provider
          deadlines?.stop();
          request.signal?.removeEventListener('abort', onCallerAbort);
          // Closes the HTTP stream when the consumer stopped early or the attempt failed. A stream
          // read to its end is closed already: aborting it would only build an AbortError (with its
          // stack) and run the fetch's abort listeners on every call.
          if (!streamRead) attemptAbort.abort();
        }
      }
    },
  };
}

/** The wait before the next attempt, or `undefined` when the failure is final. */
function retryDelay(
  classified: ReturnType<typeof classifyModelError>,
  attempt: number,
  retry: Required<ModelRetryOptions>,
): number | undefined {
  if (!classified.retryable || attempt > retry.maxRetries) return undefined;
  if (classified.reason === 'rate-limited' && classified.retryAfterMs !== undefined) {
    return classified.retryAfterMs <= retry.maxRetryAfterMs ? classified.retryAfterMs : undefined;
  }
  return backoffDelay(attempt - 1, { initialDelayMs: retry.baseDelayMs, maxDelayMs: retry.maxRetryAfterMs });
}

/** The error of a call that would wait longer than `retry.maxRetryAfterMs` for a 429 pause to end. */
function pausedError(ctx: ModelErrorContext, remainingMs: number): ColloquyError {
  return new ColloquyError(
    'RATE_LIMITED',
    `Model "${ctx.model}" of provider "${ctx.provider}" is rate limited: an earlier 429 asked to wait ${Math.ceil(remainingMs / 1000)} s more. Retry later, or set models.providers.${ctx.provider}.limits to stay under the provider's limits.`,
    {
      provider: ctx.provider,
      model: ctx.model,
      attempts: ctx.attempts,
      partial: false,
      reason: 'rate-limited',
      retryable: false,
      retryAfterMs: remainingMs,
    },
  );
}

/** A rough prompt size for the tokens-per-minute bucket: text characters / 4 (images count 1,000). */
function estimatePromptTokens(request: ModelRequest): number {
  let chars = request.system.length;
  for (const tool of request.tools) chars += JSON.stringify(tool).length;
  for (const message of request.messages) chars += messageChars(message);
  return Math.ceil(chars / 4);
}

function messageChars(message: ModelMessage): number {
  if (typeof message.content === 'string') return message.content.length;
  let chars = 0;
  for (const block of message.content) {
    if (block.type === 'text') chars += block.text.length;
    else if (block.type === 'thinking') chars += block.thinking.length;
    else if (block.type === 'toolCall') chars += JSON.stringify(block.arguments ?? null).length;
    else chars += 4000;
  }
  return chars;
}

/** Waits before a retry; the caller aborting turns into the same error as an aborted call. */
async function waitToRetry(
  ms: number,
  signal: AbortSignal | undefined,
  ctx: ModelErrorContext,
): Promise<void> {
  try {
    await sleep(ms, signal);
  } catch (reason) {
    throw classifyModelError(reason, ctx, { by: 'caller', reason }).error;
  }
}
