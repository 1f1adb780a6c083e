// @colloquy/plugin-telegram: the Telegram channel for Colloquy, on grammY.

// --- formatting (advanced) ---
// Model markdown becomes Telegram HTML through `@colloquy/markdown` (`renderMessages(text, telegramHtml)`).
export { escapeHtml, TELEGRAM_TEXT_LIMIT } from '@colloquy/markdown';
// --- config ---
export type {
  TelegramAccountConfig,
  TelegramConfig,
  TelegramConfigInput,
  TelegramConfigIssue,
} from './config.js';
export { resolveTelegramConfig, TelegramConfigSchema } from './config.js';
// --- files ---
export type { TelegramFile } from './outbound/download-file.js';
// --- the plugin ---
export type { TelegramChannelPlugin, TelegramPluginOptions } from './telegram-plugin.js';
export { createTelegramPlugin } from './telegram-plugin.js';
