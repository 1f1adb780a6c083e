import type { SharedV3ProviderOptions } from '@ai-sdk/provider';
import {
  backoffDelay,
  ColloquyError,
  type FinishReason,
  type Logger,
  type ModelMessage,
  type ModelProvider,
  type ModelProviderLimits,
  type ModelRequest,
  type ModelStreamEvent,
  silentLogger,
  sleep,
  type TokenUsage,
} from '@colloquy/core';
import type { LanguageModel, LanguageModelUsage } from 'ai';
import { loadAi } from './load-ai-sdk.js';
import { toAiSdkMessages, toAiSdkTools } from './map-messages.js';
import { classifyModelError, type ModelErrorContext } from './model-errors.js';
import { stripProviderPrefix } from './model-ref.js';
import type { ModelRetryOptions } from './provider-config.js';
import { createProviderLimiter, type ProviderPermit } from './provider-limiter.js';
import { type DirectPart, isV3Model, streamDirect } from './v3-stream.js';

/** Defaults of the provider options. */
export const MODEL_PROVIDER_DEFAULTS = {
  idleTimeoutMs: 120_000,
  retry: { maxRetries: 2, baseDelayMs: 500, maxRetryAfterMs: 20_000 },
} as const;

/** What {@link createAiSdkModelProvider} needs: how to get an AI SDK model and how to describe it. */
export interface AiSdkProviderSpec {
  /** The provider id (the key under `models.providers`). */
  id: string;
  /** Returns the AI SDK language model for a model id (without the `<id>/` prefix). */
  languageModel(modelId: string): LanguageModel | Promise<LanguageModel>;
  /** Provider options for a request (thinking levels and the like). */
  providerOptions?(request: ModelRequest): SharedV3ProviderOptions | undefined;
  /** Keep signed thinking blocks when mapping the history (Anthropic). Default false. */
  keepSignedThinking?: boolean;
  /** For error messages. */
  baseURL?: string;
  /** For error messages. */
  apiKeyEnv?: string;
  /** A call that receives no data for this many milliseconds fails with `TIMEOUT`. Default 120 s. */
  idleTimeoutMs?: number;
  /** How failed calls are retried (attempts and backoff). */
  retry?: ModelRetryOptions;
  /**
   * Concurrency and rate limits of this provider (`models.providers.<id>.limits`), shared by every call
   * of the returned provider: default 256 calls in flight, requests and tokens per minute unlimited.
   */
  limits?: ModelProviderLimits;
  /** Receives retry and failure logs. Default: silent. */
  logger?: Logger;
}

/**
 * A `ModelProvider` over any AI SDK language model: one model call per `streamTurn` call (the model's
 * own `doStream` for specification v3 models, which every current `@ai-sdk/*` provider implements,
 * else one `streamText` step), tools passed as JSON Schema without `execute` (the caller runs them),
 * provider failures turned into `ColloquyError`s, and bounded retries before any output is
 * streamed. Each attempt waits for the
 * provider's limits (`spec.limits`); a 429 pauses every call of the provider for its retry-after.
 *
 * Most users want `createModelProvider`, which builds the AI SDK model from config; use this one to
 * plug in any other AI SDK provider package.
 *
 * @param spec - see {@link AiSdkProviderSpec}
 * @returns a `ModelProvider` whose `streamTurn` yields `text-delta`, `tool-call` and a final `finish`
 * @throws (from `streamTurn`) ColloquyError `MODEL_ERROR`, `RATE_LIMITED` (`details.retryAfterMs`),
 *   `TIMEOUT` or `ABORTED`; `details.reason` says more (see `ModelFailureReason`)
 * @example
 * ```ts
 * import { createOpenAI } from '@ai-sdk/openai';
 * const openai = createOpenAI({ apiKey: process.env.OPENAI_API_KEY });
 * const provider = createAiSdkModelProvider({ id: 'openai', languageModel: (m) => openai.responses(m) });
 * ```
 */
export function createAiSdkModelProvider(spec: AiSdkProviderSpec): ModelProvider {
  const retry = { ...MODEL_PROVIDER_DEFAULTS.retry, ...spec.retry };
  const idleTimeoutMs = spec.idleTimeoutMs ?? MODEL_PROVIDER_DEFAULTS.idleTimeoutMs;
  const log = (spec.logger ?? silentLogger).child({ provider: spec.id });
  const limiter = createProviderLimiter(spec.limits);
  const countTokens = spec.limits?.tokensPerMinute !== undefined;
  // One AI SDK model per model id: building one sets up its response schemas, which costs more CPU
  // than the rest of a short call. A failed build is not kept.
  const models = new Map<string, Promise<LanguageModel>>();
  const languageModel = (modelId: string): Promise<LanguageModel> => {
    let model = models.get(modelId);
    if (!model) {
      model = Promise.resolve(spec.languageModel(modelId));
      models.set(modelId, model);
      model.catch(() => models.delete(modelId));
    }
    return model;
  };

  return {
    id: spec.id,
    async *streamTurn(request: ModelRequest): AsyncGenerator<ModelStreamEvent> {
      const modelId = stripProviderPrefix(spec.id, request.model);
      const messages = toAiSdkMessages(request.messages, {
        keepSignedThinking: spec.keepSignedThinking ?? false,
      });
      const providerOptions = spec.providerOptions?.(request);
      const model = await languageModel(modelId);
      const call = (abortSignal: AbortSignal): AsyncIterable<DirectPart> =>
        isV3Model(model)
          ? streamDirect(model, {
              system: request.system,
              messages,
              tools: request.tools,
              ...(request.maxOutputTokens !== undefined ? { maxOutputTokens: request.maxOutputTokens } : {}),
              ...(providerOptions ? { providerOptions } : {}),
              abortSignal,
            })
          : streamWithStreamText(model, request, messages, providerOptions, abortSignal);
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
        const attemptAbort = new AbortController();
        const onCallerAbort = () => attemptAbort.abort(request.signal?.reason);
        if (request.signal?.aborted) onCallerAbort();
        request.signal?.addEventListener('abort', onCallerAbort, { once: true });
        let timedOut = false;
        let idleTimer: NodeJS.Timeout | undefined;
        const armIdleTimer = () => {
          if (idleTimer) clearTimeout(idleTimer);
          idleTimer = setTimeout(() => {
            timedOut = true;
            attemptAbort.abort(new DOMException(`no data for ${idleTimeoutMs} ms`, 'TimeoutError'));
          }, idleTimeoutMs);
        };
        const abortState = () =>
          request.signal?.aborted
            ? ({ by: 'caller', reason: request.signal.reason } as const)
            : timedOut
              ? ({ by: 'timeout', timeoutMs: idleTimeoutMs } as const)
              : undefined;

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
          armIdleTimer();
          let finish: ModelStreamEvent | undefined;
          for await (const part of call(attemptAbort.signal)) {
            if (idleTimer) clearTimeout(idleTimer); // the consumer's time between parts does not count
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
            armIdleTimer();
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
          yield finish;
          return;
        } catch (thrown) {
          const classified = classifyModelError(thrown, ctx, abortState());
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
          if (idleTimer) clearTimeout(idleTimer);
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

/**
 * One call through `streamText`, for models the direct path cannot call (specification v2 models,
 * model ids as strings): its parts as the direct path yields them.
 */
async function* streamWithStreamText(
  model: LanguageModel,
  request: ModelRequest,
  messages: ReturnType<typeof toAiSdkMessages>,
  providerOptions: SharedV3ProviderOptions | undefined,
  abortSignal: AbortSignal,
): AsyncGenerator<DirectPart> {
  const sdk = await loadAi();
  const tools = request.tools.length > 0 ? toAiSdkTools(request.tools, sdk) : undefined;
  const result = sdk.streamText({
    model,
    system: request.system,
    messages,
    ...(tools ? { tools, toolChoice: 'auto' as const } : {}),
    ...(request.maxOutputTokens !== undefined ? { maxOutputTokens: request.maxOutputTokens } : {}),
    ...(providerOptions ? { providerOptions } : {}),
    // One retry layer: the provider's own loop. The SDK's retry (2 retries from 2 s, honouring
    // retry-after up to 60 s) wraps only the request that opens the stream and would hold this call's
    // limiter permit through a 429 instead of pausing every call of the provider, and could not turn a
    // long retry-after into RATE_LIMITED for the caller to schedule.
    maxRetries: 0,
    abortSignal,
    onError: () => {}, // errors arrive as `error` parts below; the default would print them
  });
  for await (const part of result.fullStream) {
    switch (part.type) {
      case 'text-delta':
        yield { type: 'text-delta', text: part.text };
        break;
      case 'tool-call':
        yield { type: 'tool-call', id: part.toolCallId, name: part.toolName, arguments: part.input };
        break;
      case 'finish':
        yield {
          type: 'finish',
          finishReason: toFinishReason(part.finishReason),
          usage: toTokenUsage(part.totalUsage),
        };
        break;
      case 'error':
        throw part.error;
      case 'abort':
        throw new DOMException('aborted', 'AbortError');
      default:
        break; // reasoning, tool-input deltas, steps, sources, raw: not part of a Colloquy turn
    }
  }
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

const FINISH_REASONS: ReadonlySet<string> = new Set([
  'stop',
  'tool-calls',
  'length',
  'content-filter',
  'error',
]);

function toFinishReason(reason: string): FinishReason {
  return FINISH_REASONS.has(reason) ? (reason as FinishReason) : 'other';
}

/** AI SDK usage to Colloquy's: missing counts are 0; `contextTokens` is the prompt size. */
export function toTokenUsage(usage: LanguageModelUsage): TokenUsage {
  const inputTokens = usage.inputTokens ?? 0;
  const outputTokens = usage.outputTokens ?? 0;
  return {
    inputTokens,
    outputTokens,
    totalTokens: usage.totalTokens ?? inputTokens + outputTokens,
    contextTokens: inputTokens,
  };
}
