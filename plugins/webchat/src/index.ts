// @colloquy/plugin-webchat: the web chat channel (HTTP + WebSocket server and its chat page).

// --- plugin ---
export type { WebChatConfig, WebChatConfigInput } from './config.js';
export { resolveWebChatConfig, WebChatConfigSchema } from './config.js';
export type { WebChatPluginOptions } from './options.js';
// --- protocol (for custom clients) ---
export type {
  ChatMessage,
  ChatPerson,
  ChatRef,
  ChatRole,
  ClientFrame,
  ErrorFrameCode,
  ServerFrame,
  SessionRow,
} from './protocol/frames.js';
export type { WebChatPlugin } from './webchat-plugin.js';
export { createWebChatPlugin, WEBCHAT_CAPABILITIES } from './webchat-plugin.js';
