// @colloquy/plugin-slack: the Slack channel for Colloquy, on @slack/bolt.

// --- config ---
export type {
  SlackAccountConfig,
  SlackAccountSecrets,
  SlackChannelConfig,
  SlackConfig,
  SlackConfigInput,
} from './config.js';
export { resolveSlackConfig, SlackConfigSchema } from './config.js';
// --- the plugin ---
export type { SlackPluginOptions } from './slack-plugin.js';
export { createSlackPlugin, SLACK_CAPABILITIES } from './slack-plugin.js';
