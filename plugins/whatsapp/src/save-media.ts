import { createWriteStream } from 'node:fs';
import { mkdir, readdir, rename, rm, stat } from 'node:fs/promises';
import { extname, join } from 'node:path';
import type { MediaAttachment } from '@colloquy/core';

/** The default cap on one downloaded media file: 20 MB. */
export const DEFAULT_MAX_MEDIA_BYTES = 20 * 1024 * 1024;

/** How many downloaded files the media folder keeps; older ones are deleted. */
export const MEDIA_FILES_KEPT = 200;

/** The kinds of media the plugin downloads (videos and stickers are only described). */
export const DOWNLOADED_KINDS: ReadonlySet<MediaAttachment['kind']> = new Set([
  'image',
  'voice',
  'audio',
  'document',
]);

/** What became of a download. */
export type SaveMediaOutcome = { ok: true; path: string; size: number } | { ok: false; reason: string };

const EXTENSIONS: Record<string, string> = {
  'image/jpeg': '.jpg',
  'image/png': '.png',
  'image/webp': '.webp',
  'image/gif': '.gif',
  'audio/ogg': '.ogg',
  'audio/mpeg': '.mp3',
  'audio/mp4': '.m4a',
  'audio/aac': '.aac',
  'application/pdf': '.pdf',
  'text/plain': '.txt',
};

/** A safe file name for a message's media: its id, with an extension from the file name or type. */
export function mediaFileName(messageId: string, media: MediaAttachment): string {
  const id = messageId.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 80) || 'media';
  const fromName = media.fileName ? extname(media.fileName).toLowerCase() : '';
  const mime = media.mimeType?.split(';')[0]?.trim().toLowerCase() ?? '';
  const ext = /^\.[a-z0-9]{1,8}$/.test(fromName) ? fromName : (EXTENSIONS[mime] ?? '.bin');
  return `${id}${ext}`;
}

const megabytes = (bytes: number): string => `${Math.round((bytes / 1024 / 1024) * 10) / 10} MB`;

/** The outcome for media over the cap. */
export const tooBig = (maxBytes: number): SaveMediaOutcome => ({
  ok: false,
  reason: `larger than maxMediaBytes (${megabytes(maxBytes)})`,
});

/**
 * Streams media bytes into `dir/name`, stopping (and deleting the part written) once more than
 * `maxBytes` arrived. The file appears under its name only when complete.
 *
 * @returns the saved path and size, or why nothing was saved
 */
export async function saveMedia(
  source: AsyncIterable<Uint8Array>,
  dir: string,
  name: string,
  maxBytes: number,
): Promise<SaveMediaOutcome> {
  await mkdir(dir, { recursive: true });
  const path = join(dir, name);
  const part = `${path}.part`;
  const out = createWriteStream(part);
  const closed = new Promise<void>((resolve, reject) => {
    out.on('close', resolve);
    out.on('error', reject);
  });
  let size = 0;
  let over = false;
  try {
    for await (const chunk of source) {
      size += chunk.length;
      if (size > maxBytes) {
        over = true;
        break;
      }
      if (!out.write(chunk)) await new Promise<void>((resolve) => out.once('drain', () => resolve()));
    }
  } finally {
    out.end();
    await closed;
  }
  if (over) {
    await rm(part, { force: true });
    return tooBig(maxBytes);
  }
  await rename(part, path);
  return { ok: true, path, size };
}

/** Deletes the oldest files in the media folder beyond `keep`. */
export async function pruneMediaDir(dir: string, keep: number = MEDIA_FILES_KEPT): Promise<void> {
  const names = (await readdir(dir)).filter((n) => !n.endsWith('.part'));
  if (names.length <= keep) return;
  const dated = await Promise.all(
    names.map(async (name) => ({ name, at: (await stat(join(dir, name))).mtimeMs })),
  );
  dated.sort((a, b) => a.at - b.at);
  for (const { name } of dated.slice(0, dated.length - keep)) await rm(join(dir, name), { force: true });
}
