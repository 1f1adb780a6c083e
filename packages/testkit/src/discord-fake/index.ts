// @colloquy/testkit/discord-fake: a Discord REST + gateway WebSocket fake on 127.0.0.1 for
// discord.js (its REST `api` option, and the gateway URL `GET /gateway/bot` returns).

export type { PlatformOutage } from '../fakes/platform-outage.js';
export {
  type ChannelRecord,
  type FakeBot,
  FakeDiscord,
  type FakeDiscordOptions,
  type FakeGuild,
  type FakeUser,
  type InteractionRecord,
  type RecordedRequest,
} from './fake-discord.js';
