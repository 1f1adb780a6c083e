// @colloquy/core/testing: tools for testing Colloquy implementations. Imports vitest where a suite needs it.

// --- scripted model and in-memory channel (no vitest import) ---
export type {
  InjectInput,
  MemoryChannel,
  MemoryChannelOptions,
  MemoryThread,
  SentMessage,
} from './memory-channel.js';
export { createMemoryChannel } from './memory-channel.js';
export type {
  ScriptedModel,
  ScriptedModelOptions,
  ScriptedReply,
  ScriptedToolCall,
  ScriptFn,
  ScriptStep,
  ScriptTurn,
} from './scripted-model.js';
export { createScriptedModel, lastUserText, messageText } from './scripted-model.js';
export type { StoreConformanceOptions } from './store-conformance.js';
// --- store conformance ---
export { makeRunRecord, makeSessionRecord, runStoreConformance } from './store-conformance.js';
