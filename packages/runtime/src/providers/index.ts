// Model providers of @colloquy/runtime: AI SDK adapters configured from `models.providers`.
// Everyday: createModelProvider, createModelRouter, resolveModelRef, estimateCostUsd.
// Advanced: createAiSdkModelProvider (any AI SDK model).

export { type AiSdkProviderSpec, createAiSdkModelProvider } from './ai-sdk-provider.js';
export type { CircuitBreakerStats, CircuitState } from './circuit-breaker.js';
export { createModelProvider } from './create-model-provider.js';
export { estimateCostUsd } from './estimate-cost.js';
export { type ModelRef, parseModelRef, resolveModelRef } from './model-ref.js';
export { createModelRouter, type ModelRouter, type ModelRouterOptions } from './model-router.js';
export type { ModelProviderOptions, ModelRetryOptions, ModelsConfigView } from './provider-config.js';
export type { ProviderLimiterStats } from './provider-limiter.js';
export type { MonitoredModelProvider, ProviderHealth } from './streaming-provider.js';
