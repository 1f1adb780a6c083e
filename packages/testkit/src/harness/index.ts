// @colloquy/testkit/harness: boots a runtime with the scripted model and the memory channel in one
// call. Needs @colloquy/runtime (an optional peer of the testkit).

export {
  createTestHarness,
  type HarnessTurn,
  SCRIPTED_MODEL_REF,
  type TestHarness,
  type TestHarnessOptions,
} from './create-test-harness.js';
