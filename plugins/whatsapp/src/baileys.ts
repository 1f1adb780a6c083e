// The one place that loads Baileys values at run time. Baileys 7 is an ES module with named exports.
import {
  BufferJSON,
  DisconnectReason,
  downloadMediaMessage,
  getContentType,
  initAuthCreds,
  isJidBroadcast,
  isJidGroup,
  isJidNewsletter,
  isLidUser,
  jidDecode,
  jidNormalizedUser,
  makeCacheableSignalKeyStore,
  makeWASocket,
  normalizeMessageContent,
  proto,
  type WAMessage,
} from '@whiskeysockets/baileys';
import type { WhatsAppSocketConfig, WhatsAppSocketLike } from './socket.js';

export {
  BufferJSON,
  DisconnectReason,
  getContentType,
  initAuthCreds,
  isJidBroadcast,
  isJidGroup,
  isJidNewsletter,
  isLidUser,
  jidDecode,
  jidNormalizedUser,
  makeCacheableSignalKeyStore,
  normalizeMessageContent,
  proto,
};

/**
 * Opens a real WhatsApp Web connection with Baileys' `makeWASocket`, plus `downloadMedia`:
 * Baileys' `downloadMediaMessage` as a stream, asking WhatsApp to re-upload expired media.
 */
export const makeBaileysSocket = (config: WhatsAppSocketConfig): WhatsAppSocketLike => {
  const sock = makeWASocket(config);
  const downloadMedia = (msg: WAMessage): Promise<AsyncIterable<Uint8Array>> =>
    downloadMediaMessage(
      msg,
      'stream',
      {},
      config.logger ? { reuploadRequest: sock.updateMediaMessage, logger: config.logger } : undefined,
    );
  return Object.assign(sock, { downloadMedia });
};
