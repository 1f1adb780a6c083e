// @colloquy/testkit: test tools for Colloquy users and plugin authors.
// The channel plugin conformance suite lives at `@colloquy/testkit/conformance`.

// --- scripted model and in-memory channel (from @colloquy/core/testing) ---
export {
  createMemoryChannel,
  createScriptedModel,
  type InjectInput,
  lastUserText,
  type MemoryChannel,
  type MemoryChannelOptions,
  type MemoryThread,
  messageText,
  type ScriptedModel,
  type ScriptedModelOptions,
  type ScriptedReply,
  type ScriptedToolCall,
  type ScriptFn,
  type ScriptStep,
  type ScriptTurn,
  type SentMessage,
} from '@colloquy/core/testing/fakes';

// --- one-call harness ---
export {
  createTestHarness,
  type HarnessTurn,
  SCRIPTED_MODEL_REF,
  type TestHarness,
  type TestHarnessOptions,
} from './harness/create-test-harness.js';
