// @colloquy/plugin-discord: the Discord channel for Colloquy, on discord.js v14.

// --- advanced: building blocks ---
// Model markdown becomes Discord markdown through `@colloquy/markdown` (`renderMessages(text, discord)`).
export { DISCORD_MESSAGE_LIMIT } from '@colloquy/markdown';
export type { AccessDecision, MessageOrigin } from './access-policy.js';
export { checkAccess, requiresMention } from './access-policy.js';
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
