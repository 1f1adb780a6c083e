// @colloquy/testkit/slack-fake: a Slack Web API + Socket Mode fake on 127.0.0.1 for @slack/bolt (its
// `clientOptions.slackApiUrl`, and the ws:// URL `apps.connections.open` returns).

export type { PlatformOutage } from '../fakes/platform-outage.js';
export {
  FakeSlack,
  type FakeSlackCall,
  type FakeSlackConversation,
  type FakeSlackFile,
  type FakeSlackMessage,
  type FakeSlackOptions,
  type FakeSlackUser,
  type FakeSlashCommand,
} from './fake-slack.js';
