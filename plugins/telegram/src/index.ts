// @colloquy/plugin-telegram: the Telegram channel for Colloquy, on grammY.

// --- config ---
export type {
  TelegramAccountConfig,
  TelegramConfig,
  TelegramConfigInput,
  TelegramConfigIssue,
} from './config.js';
export { resolveTelegramConfig, TelegramConfigSchema } from './config.js';
// --- formatting (advanced) ---
export { chunkTelegramHtml, TELEGRAM_TEXT_LIMIT } from './format/chunk-html.js';
export { escapeHtml } from './format/escape-html.js';
export { markdownToTelegramHtml } from './format/markdown-to-html.js';
// --- files ---
export type { TelegramFile } from './outbound/download-file.js';
// --- the plugin ---
export type { TelegramChannelPlugin, TelegramPluginOptions } from './telegram-plugin.js';
export { createTelegramPlugin } from './telegram-plugin.js';
