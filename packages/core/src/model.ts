/**
 * For model provider authors: the one streaming call the agent loop makes, its request and its events.
 * The runtime's AI SDK adapter and the testkit's scripted model implement it; the settings of a provider
 * and its prices are the `models` section of the config.
 *
 * @packageDocumentation
 */
// biome-ignore-all assist/source/organizeImports: the exports are grouped by what a reader looks for.

// --- the contract ---
export type {
  FinishReason,
  ModelMessage,
  ModelProvider,
  ModelRequest,
  ModelStreamEvent,
  ModelToolSpec,
} from './interfaces/model-provider.js';
export type { TokenUsage } from './interfaces/records.js';

// --- a provider's settings under `models` in the config ---
export type {
  ModelPrice,
  ModelProviderCircuitBreaker,
  ModelProviderConfig,
  ModelProviderLimits,
  ModelProviderTimeouts,
} from './config/index.js';
