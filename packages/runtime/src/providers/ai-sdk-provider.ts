import type { SharedV4ProviderOptions } from '@ai-sdk/provider';
import type { Logger } from '@colloquy/core';
import type {
  FinishReason,
  ModelProviderCircuitBreaker,
  ModelProviderLimits,
  ModelProviderTimeouts,
  ModelRequest,
  TokenUsage,
} from '@colloquy/core/model';
import type { LanguageModel, LanguageModelUsage } from 'ai';
import { loadAi } from './load-ai-sdk.js';
import { toAiSdkMessages, toAiSdkTools } from './map-messages.js';
import { type DirectPart, isV4Model, streamDirect } from './model-stream.js';
import type { ModelRetryOptions } from './provider-config.js';
import { createStreamingProvider, type MonitoredModelProvider } from './streaming-provider.js';

/** What {@link createAiSdkModelProvider} needs: how to get an AI SDK model and how to describe it. */
export interface AiSdkProviderSpec {
  /** The provider id (the key under `models.providers`). */
  id: string;
  /** Returns the AI SDK language model for a model id (without the `<id>/` prefix). */
  languageModel(modelId: string): LanguageModel | Promise<LanguageModel>;
  /** Provider options for a request (thinking levels and the like). */
  providerOptions?(request: ModelRequest): SharedV4ProviderOptions | undefined;
  /** Keep signed thinking blocks when mapping the history (Anthropic). Default false. */
  keepSignedThinking?: boolean;
  /** For error messages. */
  baseURL?: string;
  /** For error messages. */
  apiKeyEnv?: string;
  /** A call that receives no data for this many milliseconds fails with `TIMEOUT`. Default 120 s. */
  idleTimeoutMs?: number;
  /**
   * Deadlines of each attempt (`models.providers.<id>.timeouts`): `idleMs` (overrides `idleTimeoutMs`),
   * `firstByteMs` (default: the idle timeout) and `totalMs` (default 600000); a missed one fails with `TIMEOUT`.
   */
  timeouts?: ModelProviderTimeouts;
  /**
   * When calls stop while the provider is down (`models.providers.<id>.circuitBreaker`): after
   * `failureThreshold` provider failures in a row (default 5) calls fail at once with `MODEL_ERROR`
   * `reason: 'circuit-open'` for `coolDownMs` (default 30000), then one call probes.
   */
  circuitBreaker?: ModelProviderCircuitBreaker;
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
 * own `doStream` for specification v4 models, which every AI SDK 7 provider package implements,
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
export function createAiSdkModelProvider(spec: AiSdkProviderSpec): MonitoredModelProvider {
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

  return createStreamingProvider({
    ...spec,
    prepare: async (request, modelId) => {
      const messages = toAiSdkMessages(request.messages, {
        keepSignedThinking: spec.keepSignedThinking ?? false,
      });
      const providerOptions = spec.providerOptions?.(request);
      const model = await languageModel(modelId);
      return (abortSignal) =>
        isV4Model(model)
          ? streamDirect(model, {
              system: request.system,
              messages,
              tools: request.tools,
              ...(request.maxOutputTokens !== undefined ? { maxOutputTokens: request.maxOutputTokens } : {}),
              ...(providerOptions ? { providerOptions } : {}),
              abortSignal,
            })
          : streamWithStreamText(model, request, messages, providerOptions, abortSignal);
    },
  });
}

/**
 * One call through `streamText`, for models the direct path cannot call (specification v2 and v3
 * models of older provider packages, model ids as strings): its parts as the direct path yields them.
 */
async function* streamWithStreamText(
  model: LanguageModel,
  request: ModelRequest,
  messages: ReturnType<typeof toAiSdkMessages>,
  providerOptions: SharedV4ProviderOptions | undefined,
  abortSignal: AbortSignal,
): AsyncGenerator<DirectPart> {
  const sdk = await loadAi();
  const tools = request.tools.length > 0 ? toAiSdkTools(request.tools, sdk) : undefined;
  const result = sdk.streamText({
    model,
    instructions: request.system,
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
  for await (const part of result.stream) {
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
