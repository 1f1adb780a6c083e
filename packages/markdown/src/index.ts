// @colloquy/markdown: model markdown for chat apps, parsed once, rendered per dialect, split into messages.

// --- advanced: your own dialect ---
export { chunkTokens } from './chunk-tokens.js';
export type { Dialect } from './dialect.js';
export {
  COMMONMARK_TEXT_LIMIT,
  commonmark,
  DISCORD_MESSAGE_LIMIT,
  discord,
  PLAIN_TEXT_LIMIT,
  plain,
  WHATSAPP_TEXT_LIMIT,
  whatsapp,
} from './dialects/chat-dialects.js';
export { SLACK_TEXT_LIMIT, slackMrkdwn } from './dialects/slack-mrkdwn.js';
export { escapeHtml, TELEGRAM_TEXT_LIMIT, telegramHtml } from './dialects/telegram-html.js';
export { parseMarkdown } from './parse.js';
// --- everyday ---
export { type RenderOptions, renderMessages, renderText } from './render.js';
export type { Token } from './tokens.js';
