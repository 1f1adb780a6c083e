// @colloquy/testkit/conformance: the channel plugin conformance suite (vitest).

// --- the suite ---
export { runChannelPluginConformance, sessionKeyInputFromInbound } from './channel-conformance.js';
export type {
  ChannelConformanceFixture,
  ChannelConformanceOptions,
  ConformanceInbound,
  ConformancePeer,
  InjectedInbound,
  PlatformSentMessage,
} from './fixture.js';

// --- driving a plugin without a runtime ---
export {
  createRecordingChannelContext,
  type RecordingChannelContext,
  type RecordingChannelContextOptions,
} from './recording-context.js';
