// @colloquy/testkit: test tools for Colloquy users, plugin and store authors. The root holds the
// runner-neutral test doubles (no vitest, no runtime); the rest is opt-in by subpath:
//   @colloquy/testkit/harness            a gateway in one call (needs @colloquy/runtime)
//   @colloquy/testkit/conformance        the channel plugin conformance suite (vitest, @colloquy/runtime)
//   @colloquy/testkit/store-conformance  the Store conformance suite (vitest)
//   @colloquy/testkit/openai-fake        a local OpenAI-compatible / Anthropic HTTP server
//   @colloquy/testkit/telegram-fake      a local Telegram Bot API (for grammY)
//   @colloquy/testkit/discord-fake       a local Discord REST + gateway (for discord.js)
//   @colloquy/testkit/slack-fake         a local Slack Web API + Socket Mode (for @slack/bolt)
//   @colloquy/testkit/postgres           a throwaway PostgreSQL server (pg, PostgreSQL binaries)
//   @colloquy/testkit/mcp-fake           a local MCP server, stdio and HTTP (@modelcontextprotocol/server)

// --- in-memory channel ---
export type {
  InjectInput,
  MemoryChannel,
  MemoryChannelOptions,
  MemoryThread,
  SentMessage,
} from './fakes/memory-channel.js';
export { createMemoryChannel } from './fakes/memory-channel.js';
// --- record factories ---
export { makeRunRecord, makeSessionRecord, T0 } from './fakes/record-factories.js';
// --- logs ---
export { createRecordingLogger, type LogEntry, type RecordingLogger } from './fakes/recording-logger.js';
// --- scripted model ---
export type {
  ScriptedModel,
  ScriptedModelOptions,
  ScriptedReply,
  ScriptedToolCall,
  ScriptFn,
  ScriptStep,
  ScriptTurn,
} from './fakes/scripted-model.js';
export { createScriptedModel, lastUserText, messageText } from './fakes/scripted-model.js';
// --- fault tests ---
export { collectUnhandledErrors, type UnhandledErrors } from './process/unhandled-errors.js';
