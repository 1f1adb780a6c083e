import type { SharedV4ProviderOptions } from '@ai-sdk/provider';
import { ColloquyError } from '@colloquy/core';
import type { ModelRequest } from '@colloquy/core/model';
import { createAiSdkModelProvider } from './ai-sdk-provider.js';
import { toAiSdkMessages } from './map-messages.js';
import { toV4Prompt } from './model-stream.js';
import { openAiChatBody } from './openai-chat/chat-request.js';
import { streamOpenAiChat } from './openai-chat/chat-stream.js';
import type { ModelProviderConfig, ModelProviderOptions } from './provider-config.js';
import {
  createStreamingProvider,
  type MonitoredModelProvider,
  type StreamingProviderSpec,
} from './streaming-provider.js';

/** The Anthropic API root used when `baseURL` is not set. */
export const ANTHROPIC_DEFAULT_BASE_URL = 'https://api.anthropic.com/v1';
/** The environment variable read for Anthropic when neither `apiKey` nor `apiKeyEnv` is set. */
export const ANTHROPIC_DEFAULT_KEY_ENV = 'ANTHROPIC_API_KEY';

/** Anthropic thinking budgets (tokens) per thinking level. */
const ANTHROPIC_THINKING_BUDGET: Record<string, number> = {
  minimal: 1024,
  low: 2048,
  medium: 8192,
  high: 16384,
};
/** Thinking levels passed to OpenAI-compatible servers as `reasoning_effort`. */
const REASONING_EFFORTS: ReadonlySet<string> = new Set(['minimal', 'low', 'medium', 'high']);

/**
 * Creates the model provider for one entry of `config.models.providers`: kind `openai-compatible`
 * over Colloquy's own chat completions client, kind `anthropic` over the AI SDK (`@ai-sdk/anthropic`).
 * `request.model` may be the full `id/model` reference or the bare model id.
 *
 * @param id - the provider id (its key under `models.providers`)
 * @param config - `{ kind, baseURL?, apiKey?, apiKeyEnv?, limits?, timeouts?, circuitBreaker? }`; `limits`
 *   bounds the calls of the returned provider (default 256 in flight, no rate limits) and a 429 pauses all
 *   of them for its retry-after; `timeouts` and `circuitBreaker` see `AiSdkProviderSpec`
 * @param options - timeouts, retries, headers, `fetch`, logger; see {@link ModelProviderOptions}
 * @returns a `ModelProvider` that also reports its `health()` (limiter and circuit breaker); its
 *   `streamTurn` throws `MODEL_ERROR`, `RATE_LIMITED`, `TIMEOUT` or `ABORTED`
 * @throws ColloquyError `CONFIG_INVALID` when `baseURL` is missing for `openai-compatible`, when
 *   `apiKeyEnv` names an unset variable, or when Anthropic has no key
 * @example
 * ```ts
 * const local = createModelProvider('local', { kind: 'openai-compatible', baseURL: 'http://127.0.0.1:11434/v1' });
 * for await (const event of local.streamTurn({ model: 'local/llama3.2', system: 'Be brief.', messages: [{ role: 'user', content: 'Hi' }], tools: [] })) {
 *   if (event.type === 'text-delta') process.stdout.write(event.text);
 * }
 * ```
 */
export function createModelProvider(
  id: string,
  config: ModelProviderConfig,
  options: ModelProviderOptions = {},
): MonitoredModelProvider {
  const env = options.env ?? process.env;
  const common = {
    id,
    ...(config.apiKeyEnv ? { apiKeyEnv: config.apiKeyEnv } : {}),
    ...(config.limits ? { limits: config.limits } : {}),
    ...(config.timeouts ? { timeouts: config.timeouts } : {}),
    ...(config.circuitBreaker ? { circuitBreaker: config.circuitBreaker } : {}),
    ...(options.idleTimeoutMs !== undefined ? { idleTimeoutMs: options.idleTimeoutMs } : {}),
    ...(options.retry ? { retry: options.retry } : {}),
    ...(options.logger ? { logger: options.logger } : {}),
  };

  if (config.kind === 'openai-compatible') {
    if (!config.baseURL) {
      throw new ColloquyError(
        'CONFIG_INVALID',
        `models.providers.${id}.baseURL is required for kind "openai-compatible" (e.g. "http://127.0.0.1:11434/v1" for Ollama).`,
        { issues: [{ path: `models.providers.${id}.baseURL`, expected: 'string (URL)', got: 'undefined' }] },
      );
    }
    const apiKey = resolveApiKey(id, config, env, undefined);
    return openAiChatProvider(common, config.baseURL, apiKey, options);
  }

  if (config.kind === 'anthropic') {
    const apiKey = resolveApiKey(id, config, env, ANTHROPIC_DEFAULT_KEY_ENV);
    if (!apiKey) {
      throw new ColloquyError(
        'CONFIG_INVALID',
        `No API key for Anthropic provider "${id}": set ${ANTHROPIC_DEFAULT_KEY_ENV}, or models.providers.${id}.apiKeyEnv (or apiKey).`,
        { issues: [{ path: `models.providers.${id}.apiKey`, expected: 'string', got: 'undefined' }] },
      );
    }
    const baseURL = config.baseURL ?? ANTHROPIC_DEFAULT_BASE_URL;
    const sdk = once(async () =>
      (await import('@ai-sdk/anthropic')).createAnthropic({
        baseURL,
        apiKey,
        ...(options.headers ? { headers: options.headers } : {}),
        ...(options.fetch ? { fetch: options.fetch } : {}),
      }),
    );
    return createAiSdkModelProvider({
      ...common,
      baseURL,
      keepSignedThinking: true,
      languageModel: async (modelId) => (await sdk()).messages(modelId),
      providerOptions: anthropicOptions,
    });
  }

  const kind: unknown = (config as { kind?: unknown }).kind;
  throw new ColloquyError(
    'CONFIG_INVALID',
    `models.providers.${id}.kind must be "openai-compatible" or "anthropic", got ${JSON.stringify(kind)}.`,
    {
      issues: [
        {
          path: `models.providers.${id}.kind`,
          expected: '"openai-compatible" | "anthropic"',
          got: String(kind),
        },
      ],
    },
  );
}

/** `apiKey`, else the variable named by `apiKeyEnv` (which must be set), else the kind's default variable. */
function resolveApiKey(
  id: string,
  config: ModelProviderConfig,
  env: Readonly<Record<string, string | undefined>>,
  defaultEnv: string | undefined,
): string | undefined {
  if (config.apiKey) return config.apiKey;
  if (config.apiKeyEnv) {
    const value = env[config.apiKeyEnv];
    if (!value) {
      throw new ColloquyError(
        'CONFIG_INVALID',
        `models.providers.${id}.apiKeyEnv names ${config.apiKeyEnv}, but that environment variable is not set. Export it or change apiKeyEnv.`,
        {
          issues: [
            { path: `models.providers.${id}.apiKeyEnv`, expected: 'a set variable', got: config.apiKeyEnv },
          ],
        },
      );
    }
    return value;
  }
  return defaultEnv ? env[defaultEnv] || undefined : undefined;
}

/**
 * The OpenAI-compatible provider over Colloquy's own chat completions client (`streamOpenAiChat`):
 * the requests `@ai-sdk/openai-compatible` sends, at a quarter to a third of its CPU per call (no web
 * streams, no per-chunk schema validation; measured with AI SDK 7, see the providers README).
 */
function openAiChatProvider(
  common: Omit<StreamingProviderSpec, 'prepare'>,
  baseURL: string,
  apiKey: string | undefined,
  options: ModelProviderOptions,
): MonitoredModelProvider {
  const endpoint = {
    url: new URL(`${baseURL.replace(/\/+$/, '')}/chat/completions`),
    headers: { ...(apiKey ? { authorization: `Bearer ${apiKey}` } : {}), ...options.headers },
    ...(options.fetch ? { fetch: options.fetch } : {}),
  };
  return createStreamingProvider({
    ...common,
    baseURL,
    prepare: (request, modelId) => {
      const messages = toAiSdkMessages(request.messages, { keepSignedThinking: false });
      const reasoningEffort = reasoningEffortOf(request);
      const body = openAiChatBody({
        modelId,
        prompt: toV4Prompt(request.system, messages),
        tools: request.tools,
        ...(request.maxOutputTokens !== undefined ? { maxOutputTokens: request.maxOutputTokens } : {}),
        ...(reasoningEffort ? { reasoningEffort } : {}),
      });
      return (signal) => streamOpenAiChat(endpoint, body, signal);
    },
  });
}

/** The thinking level of a request as an OpenAI `reasoning_effort`, when it is one. */
function reasoningEffortOf(request: ModelRequest): string | undefined {
  const level = request.thinking?.toLowerCase();
  return level && REASONING_EFFORTS.has(level) ? level : undefined;
}

function anthropicOptions(request: ModelRequest): SharedV4ProviderOptions | undefined {
  const budgetTokens = request.thinking
    ? ANTHROPIC_THINKING_BUDGET[request.thinking.toLowerCase()]
    : undefined;
  if (budgetTokens === undefined) return undefined;
  return { anthropic: { thinking: { type: 'enabled', budgetTokens } } };
}

/** Runs `load` on the first call only (the SDK packages are imported when a model is first used). */
function once<T>(load: () => Promise<T>): () => Promise<T> {
  let loaded: Promise<T> | undefined;
  return () => {
    loaded ??= load();
    return loaded;
  };
}
