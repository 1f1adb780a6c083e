// colloquy: the reference multi-channel bot and its CLI.

// --- the bot ---
export type { Bot, BotOptions } from './bot/start-bot.js';
export { startBot } from './bot/start-bot.js';
// --- the CLI ---
export type { CliIo } from './cli/cli-io.js';
export { runCli } from './cli/run-cli.js';
// --- slash commands ---
export type { SlashCommand } from './commands/parse-slash-command.js';
export { parseSlashCommand, SLASH_COMMANDS } from './commands/parse-slash-command.js';
export type { SlashCommands, SlashCommandsOptions } from './commands/slash-commands.js';
export { createSlashCommands } from './commands/slash-commands.js';
// --- config ---
export type { AppSection, StorageSection, TelemetrySection, WebChatSection } from './config/app-schema.js';
export { AppSectionSchema, WebChatSectionSchema } from './config/app-schema.js';
export { CONFIG_TEMPLATE } from './config/config-template.js';
export type { Env, EnvOverlay } from './config/env-overlay.js';
export { applyEnvironment, ENV } from './config/env-overlay.js';
export type {
  BotConfig,
  BotConfigLoad,
  LoadBotConfigOptions,
  PlatformSections,
} from './config/load-config.js';
export { loadBotConfig } from './config/load-config.js';
