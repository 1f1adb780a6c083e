// The one place that loads Baileys values at run time. Baileys ships CommonJS. Node's ESM loader
// does not see every re-export as a named export (`proto` is one it misses) but gives the whole
// CommonJS module as the default import (which is how TypeScript types it under NodeNext); bundlers
// and Vitest give named exports on the namespace instead. Take whichever holds the full API.
import baileysDefault, * as baileysNamespace from '@whiskeysockets/baileys';
import type { WhatsAppSocketConfig, WhatsAppSocketLike } from './socket.js';

type BaileysModule = typeof baileysDefault;

const hasFullApi = (candidate: unknown): candidate is BaileysModule =>
  (typeof candidate === 'object' || typeof candidate === 'function') &&
  candidate !== null &&
  'proto' in candidate &&
  'initAuthCreds' in candidate &&
  'makeWASocket' in candidate;

const baileys: BaileysModule = (() => {
  for (const candidate of [baileysDefault, baileysNamespace]) if (hasFullApi(candidate)) return candidate;
  throw new Error('@whiskeysockets/baileys did not load as expected; reinstall it (pnpm install).');
})();

export const {
  BufferJSON,
  DisconnectReason,
  initAuthCreds,
  makeCacheableSignalKeyStore,
  proto,
  jidDecode,
  jidNormalizedUser,
  isJidGroup,
  isJidBroadcast,
  isJidNewsletter,
  isLidUser,
  normalizeMessageContent,
  getContentType,
} = baileys;

/** Opens a real WhatsApp Web connection with Baileys' `makeWASocket`. */
export const makeBaileysSocket = (config: WhatsAppSocketConfig): WhatsAppSocketLike =>
  baileys.makeWASocket(config);
