import { ColloquyError } from '@colloquy/core';
import type { Api } from 'grammy';
import type { TelegramAccountConfig } from '../config.js';
import { toChannelError } from './telegram-errors.js';

/** A downloaded Telegram file. */
export interface TelegramFile {
  /** The file's bytes. */
  data: Buffer;
  /** The path Telegram stores it under, e.g. `photos/file_3.jpg` (no token). */
  filePath: string;
  /** The file's size in bytes. */
  size: number;
}

/** The Bot API serves files up to 20 MB. */
export const DEFAULT_MAX_FILE_BYTES = 20 * 1024 * 1024;
const DOWNLOAD_TIMEOUT_MS = 60_000;

/**
 * Resolves a file id with getFile and downloads it from the account's API root.
 *
 * @param api - the account's grammY API
 * @param account - the account (its token and apiRoot build the download URL, never logged)
 * @param fileId - `MediaAttachment.ref` of an inbound message
 * @param maxBytes - refuse larger files; default 20 MB
 * @throws ColloquyError `CHANNEL_ERROR` when getFile or the download fails or the file is too big
 */
export async function downloadTelegramFile(
  api: Api,
  account: TelegramAccountConfig,
  fileId: string,
  maxBytes: number = DEFAULT_MAX_FILE_BYTES,
): Promise<TelegramFile> {
  let filePath: string | undefined;
  let declared: number | undefined;
  try {
    const file = await api.getFile(fileId);
    filePath = file.file_path;
    declared = file.file_size;
  } catch (error) {
    throw toChannelError(error, `look up file ${fileId}`, { fileId });
  }
  if (!filePath) {
    throw new ColloquyError(
      'CHANNEL_ERROR',
      `Telegram gave no download path for file ${fileId}; it may be too big for the Bot API (20 MB).`,
      { fileId },
    );
  }
  if (declared !== undefined && declared > maxBytes) throw tooBig(fileId, declared, maxBytes);
  const root = (account.apiRoot ?? 'https://api.telegram.org').replace(/\/+$/, '');
  const url = `${root}/file/bot${account.token}/${filePath.split('/').map(encodeURIComponent).join('/')}`;
  let response: Response;
  try {
    response = await fetch(url, { signal: AbortSignal.timeout(DOWNLOAD_TIMEOUT_MS) });
  } catch (error) {
    throw new ColloquyError(
      'CHANNEL_ERROR',
      `Could not download Telegram file ${fileId}: ${(error as Error).message}. Check the network or apiRoot.`,
      { fileId, filePath },
      { cause: error },
    );
  }
  if (!response.ok || !response.body) {
    throw new ColloquyError(
      'CHANNEL_ERROR',
      `Telegram answered ${response.status} when downloading file ${fileId}; the file link may have expired, so fetch it again with a fresh getFile.`,
      { fileId, filePath, status: response.status },
    );
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of response.body) {
    size += chunk.byteLength;
    if (size > maxBytes) {
      await response.body.cancel().catch(() => {});
      throw tooBig(fileId, size, maxBytes);
    }
    chunks.push(Buffer.from(chunk));
  }
  return { data: Buffer.concat(chunks), filePath, size };
}

function tooBig(fileId: string, size: number, maxBytes: number): ColloquyError {
  return new ColloquyError(
    'CHANNEL_ERROR',
    `Telegram file ${fileId} is ${size} bytes, over the ${maxBytes}-byte limit; raise maxBytes to accept it.`,
    { fileId, size, maxBytes },
  );
}
