// @colloquy/core/testing/fakes: the test doubles alone, with no test-runner import, so they work
// in any runner or in a plain script. `@colloquy/core/testing` re-exports them with the suites.

export type {
  InjectInput,
  MemoryChannel,
  MemoryChannelOptions,
  MemoryThread,
  SentMessage,
} from './memory-channel.js';
// --- in-memory channel ---
export { createMemoryChannel } from './memory-channel.js';
// --- record factories ---
export { makeRunRecord, makeSessionRecord } from './record-factories.js';
export type {
  ScriptedModel,
  ScriptedModelOptions,
  ScriptedReply,
  ScriptedToolCall,
  ScriptFn,
  ScriptStep,
  ScriptTurn,
} from './scripted-model.js';
// --- scripted model ---
export { createScriptedModel, lastUserText, messageText } from './scripted-model.js';
