// @colloquy/plugin-discord: the Discord channel for Colloquy, on discord.js v14.

// --- config ---
export type {
  DiscordAccountConfig,
  DiscordConfig,
  DiscordConfigInput,
  DiscordConfigIssue,
  DiscordGuildConfig,
} from './config.js';
export { DiscordConfigSchema, resolveDiscordConfig } from './config.js';
export { DISCORD_INTENTS } from './discord-account.js';
// --- the plugin ---
export type { DiscordPluginOptions } from './discord-plugin.js';
export { createDiscordPlugin, DISCORD_CAPABILITIES } from './discord-plugin.js';
