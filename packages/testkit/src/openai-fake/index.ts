// @colloquy/testkit/openai-fake: a local OpenAI-compatible (and Anthropic messages) HTTP server on
// 127.0.0.1 that answers from a script, for tests of the real model adapters. node:http only.

export {
  type FakeReply,
  type FakeScript,
  type FakeScriptFn,
  type FakeToolCall,
  type FakeUsage,
  fakeReply,
  type OpenAIFake,
  type OpenAIFakeOptions,
  type RecordedRequest,
  startOpenAIFake,
} from './openai-fake.js';
