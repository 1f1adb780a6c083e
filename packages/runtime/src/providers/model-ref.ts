import { ColloquyError } from '@colloquy/core';
import type { ModelProviderConfig, ModelsConfigView } from './provider-config.js';

/** A parsed `provider/model` reference. */
export interface ModelRef {
  /** The key under `config.models.providers`. */
  providerId: string;
  /** The provider's own model name; may itself contain `/` (e.g. OpenRouter's `anthropic/claude-sonnet-4`). */
  modelId: string;
}

/**
 * Splits a `provider/model` reference at its first `/`.
 *
 * @param ref - e.g. `openai/gpt-4o-mini` or `openrouter/anthropic/claude-sonnet-4`
 * @returns the provider id and the model id
 * @throws ColloquyError `INVALID_ARGUMENT` when either part is empty
 * @example
 * ```ts
 * parseModelRef('local/llama3.2'); // { providerId: 'local', modelId: 'llama3.2' }
 * ```
 */
export function parseModelRef(ref: string): ModelRef {
  const trimmed = ref.trim();
  const slash = trimmed.indexOf('/');
  const providerId = slash > 0 ? trimmed.slice(0, slash) : '';
  const modelId = slash > 0 ? trimmed.slice(slash + 1) : '';
  if (!providerId || !modelId) {
    throw new ColloquyError(
      'INVALID_ARGUMENT',
      `Model "${ref}" is not a "provider/model" reference; write it as e.g. "openai/gpt-4o-mini", where "openai" is a key of models.providers.`,
      { ref },
    );
  }
  return { providerId, modelId };
}

/**
 * Resolves a `provider/model` reference against `config.models.providers`.
 *
 * @param config - a Colloquy config (only `models.providers` is read)
 * @param ref - the model reference
 * @returns the parsed reference and the provider's config
 * @throws ColloquyError `INVALID_ARGUMENT` when the reference is malformed or names an unknown provider
 *   (`details.known` lists the configured provider ids)
 * @example
 * ```ts
 * const { providerId, modelId, provider } = resolveModelRef(config, 'anthropic/claude-sonnet-4-5');
 * ```
 */
export function resolveModelRef(
  config: ModelsConfigView,
  ref: string,
): ModelRef & { provider: ModelProviderConfig } {
  const parsed = parseModelRef(ref);
  const provider = config.models.providers[parsed.providerId];
  if (!provider) throw unknownProviderError(ref, parsed.providerId, Object.keys(config.models.providers));
  return { ...parsed, provider };
}

/**
 * The model id to send to a provider: `request.model` without the provider's own `<id>/` prefix.
 * A model without that prefix is sent as is.
 */
export function stripProviderPrefix(providerId: string, model: string): string {
  const prefix = `${providerId}/`;
  return model.startsWith(prefix) ? model.slice(prefix.length) : model;
}

/** The `INVALID_ARGUMENT` error for a model reference whose provider is not configured. */
export function unknownProviderError(
  ref: string,
  providerId: string,
  known: readonly string[],
): ColloquyError {
  return new ColloquyError(
    'INVALID_ARGUMENT',
    `Unknown model provider "${providerId}" in model "${ref}". Add it under models.providers` +
      (known.length > 0 ? ` or use one of: ${known.join(', ')}.` : ' (none is configured).'),
    { ref, providerId, known: [...known] },
  );
}
