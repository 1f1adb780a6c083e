// Model providers of @colloquy/runtime: AI SDK adapters configured from `models.providers`.
// Everyday: createModelProvider, createModelRouter, resolveModelRef, estimateCostUsd.
// Advanced: createAiSdkModelProvider (any AI SDK model), the message mapping and error helpers.

export {
  type AiSdkProviderSpec,
  createAiSdkModelProvider,
  MODEL_PROVIDER_DEFAULTS,
} from './ai-sdk-provider.js';
export { createModelProvider } from './create-model-provider.js';
export { estimateCostUsd, priceForModel } from './estimate-cost.js';
export { MISSING_TOOL_RESULT, toAiSdkMessages, toAiSdkTools } from './map-messages.js';
export type { ModelFailureReason } from './model-errors.js';
export { retryAfterFromHeaders } from './model-errors.js';
export { type ModelRef, parseModelRef, resolveModelRef } from './model-ref.js';
export { createModelRouter, type ModelRouter, type ModelRouterOptions } from './model-router.js';
export type { ModelProviderOptions, ModelRetryOptions, ModelsConfigView } from './provider-config.js';
