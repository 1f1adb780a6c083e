// @colloquy/testkit/harness: boots a runtime with the scripted model and the memory channel in one
// call. Needs @colloquy/runtime (an optional peer of the testkit).

// The types the harness's options and result name, so harness users need no second import.
export type {
  InjectInput,
  MemoryChannel,
  MemoryChannelOptions,
  MemoryThread,
  SentMessage,
} from '../fakes/memory-channel.js';
export type {
  ScriptedModel,
  ScriptedReply,
  ScriptedToolCall,
  ScriptFn,
  ScriptStep,
  ScriptTurn,
} from '../fakes/scripted-model.js';
export {
  createTestHarness,
  type HarnessTurn,
  SCRIPTED_MODEL_REF,
  type TestHarness,
  type TestHarnessOptions,
} from './create-test-harness.js';
