import type { ModelProvider, ModelRequest, ModelStreamEvent } from '@colloquy/core/model';
import { createModelProvider } from './create-model-provider.js';
import { parseModelRef, unknownProviderError } from './model-ref.js';
import type { ModelProviderOptions, ModelsConfigView } from './provider-config.js';
import type { ProviderHealth } from './streaming-provider.js';

/** Options of {@link createModelRouter}. */
export interface ModelRouterOptions extends ModelProviderOptions {
  /**
   * Ready-made providers by id, used before `config.models.providers` (e.g. `{ scripted: createScriptedModel(...) }`
   * so `scripted/test` works in tests).
   */
  providers?: Readonly<Record<string, ModelProvider>>;
}

/** A `ModelProvider` that dispatches each request by the provider part of `request.model`. */
export interface ModelRouter extends ModelProvider {
  /** The provider serving a `provider/model` reference (created on first use and cached). */
  providerFor(ref: string): ModelProvider;
  /** True when `ref` is well formed and its provider is known. */
  has(ref: string): boolean;
  /**
   * The health of each provider created from config so far, by id: its limiter (calls in flight,
   * waiting, 429 pause) and its circuit breaker (`closed`, `open` or `half-open`).
   */
  health(): Record<string, ProviderHealth>;
}

/**
 * Creates one `ModelProvider` for a whole config: `streamTurn({ model: 'anthropic/claude-sonnet-4-5', ... })`
 * goes to the `anthropic` provider, built from `config.models.providers.anthropic` on first use.
 *
 * @param config - a Colloquy config (only `models.providers` is read)
 * @param options - extra ready-made providers, and options passed to every provider created
 * @returns a router; its `streamTurn` throws `INVALID_ARGUMENT` for an unknown or malformed model reference,
 *   `CONFIG_INVALID` for a bad provider entry, and what the provider throws otherwise
 * @example
 * ```ts
 * const models = createModelRouter(config, { providers: { scripted: createScriptedModel([{ text: 'hi' }]) } });
 * for await (const e of models.streamTurn({ model: 'scripted/test', system: '', messages: [], tools: [] })) console.log(e);
 * ```
 */
export function createModelRouter(config: ModelsConfigView, options: ModelRouterOptions = {}): ModelRouter {
  const { providers: given = {}, ...providerOptions } = options;
  const cache = new Map<string, ModelProvider>(Object.entries(given));
  const monitored = new Map<string, () => ProviderHealth>();

  const providerFor = (ref: string): ModelProvider => {
    const { providerId } = parseModelRef(ref);
    const cached = cache.get(providerId);
    if (cached) return cached;
    const entry = config.models.providers[providerId];
    if (!entry) {
      const known = [...new Set([...cache.keys(), ...Object.keys(config.models.providers)])];
      throw unknownProviderError(ref, providerId, known);
    }
    const created = createModelProvider(providerId, entry, providerOptions);
    cache.set(providerId, created);
    monitored.set(providerId, created.health);
    return created;
  };

  return {
    id: 'router',
    providerFor,
    has(ref) {
      try {
        const { providerId } = parseModelRef(ref);
        return cache.has(providerId) || providerId in config.models.providers;
      } catch {
        return false;
      }
    },
    health: () => Object.fromEntries([...monitored].map(([id, health]) => [id, health()])),
    async *streamTurn(request: ModelRequest): AsyncGenerator<ModelStreamEvent> {
      yield* providerFor(request.model).streamTurn(request);
    },
  };
}
