// @colloquy/plugin-whatsapp: the WhatsApp channel for Colloquy, on Baileys.

export type { FileHandleLike, StateFs } from './atomic-file.js';
export type { AtomicAuthState, AtomicAuthStateOptions } from './auth-state.js';
// --- linking ---
export { resetWhatsAppAuth, useAtomicAuthState } from './auth-state.js';
export type { BackoffOptions } from './close-reason.js';
export type { WhatsAppConfig, WhatsAppConfigInput, WhatsAppConfigIssue } from './config.js';
// --- config ---
export { resolveWhatsAppConfig, WhatsAppConfigSchema, WhatsAppGroupConfigSchema } from './config.js';
// --- advanced: the socket seam, state files ---
// Model markdown becomes WhatsApp text through `@colloquy/markdown` (`renderMessages(text, whatsapp)`).
export type { WhatsAppPlugin, WhatsAppPluginOptions } from './plugin.js';
// --- the plugin ---
export { createWhatsAppPlugin } from './plugin.js';
export type { QrOutput } from './qr.js';
export type {
  WhatsAppEventEmitterLike,
  WhatsAppEventMap,
  WhatsAppSocketConfig,
  WhatsAppSocketFactory,
  WhatsAppSocketLike,
} from './socket.js';
