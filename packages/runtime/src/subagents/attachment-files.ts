import { createHash, randomUUID } from 'node:crypto';
import { constants } from 'node:fs';
import { lstat, mkdir, open, readdir, realpath, rmdir, unlink } from 'node:fs/promises';
import { join, sep } from 'node:path';
import { ColloquyError, isColloquyError } from '@colloquy/core';
import type { AttachmentFileReceipt, AttachmentReceipt } from '@colloquy/core/gateway';
import { ATTACHMENT_MANIFEST, type CheckedAttachment } from '@colloquy/core/internal';
import { ATTACHMENTS_SUBDIR } from './workspace.js';

/** What {@link writeAttachments} wrote. */
export interface WrittenAttachments {
  /** The attachment folder's id (a UUID). */
  id: string;
  /** The folder on this machine. */
  hostDir: string;
  receipt: AttachmentReceipt;
}

/** Options of {@link writeAttachments}. */
export interface WriteAttachmentsOptions {
  /** The child session's workspace folder (created when missing). */
  workspace: string;
  /** Files that passed `checkAttachments`. */
  files: readonly CheckedAttachment[];
  /** How the child sees the folder; default the host path. */
  mountPath?: string;
  /** The folder id; default a fresh UUID (tests pin it). */
  id?: string;
  /** Epoch ms written to the manifest. */
  now: number;
}

// Create only, never through a symlink, never over an existing file.
const CREATE_FLAGS = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | (constants.O_NOFOLLOW ?? 0);

/**
 * Writes a sub-agent's attachments to `<workspace>/.colloquy/attachments/<id>/` with a
 * `manifest.json`, refusing to go through symlinks: every folder on the way must be a real
 * folder (a symlink there is refused, nothing is created through it), the `<id>` folder must be
 * new, and files are created with `O_EXCL | O_NOFOLLOW`. On any failure the `<id>` folder is
 * removed again (symlink-safely) and nothing is left behind.
 *
 * @param options - workspace, checked files, mount path
 * @returns the folder and the receipt (each file with its SHA-256)
 * @throws `FORBIDDEN` when a symlink or a foreign file is in the way; `STORE_ERROR` for other I/O errors
 */
export async function writeAttachments(options: WriteAttachmentsOptions): Promise<WrittenAttachments> {
  const id = options.id ?? randomUUID();
  await mkdir(options.workspace, { recursive: true });
  await requireRealDir(options.workspace);
  let dir = options.workspace;
  for (const segment of ATTACHMENTS_SUBDIR) {
    dir = join(dir, segment);
    await ensureRealDir(dir);
  }
  const hostDir = join(dir, id);
  try {
    await mkdir(hostDir);
  } catch (error) {
    throw refused(`the attachment folder ${hostDir} already exists`, error);
  }
  try {
    await requireRealDir(hostDir);
    const expected = join(await realpath(options.workspace), ...ATTACHMENTS_SUBDIR, id);
    if ((await realpath(hostDir)) !== expected) throw refused(`${hostDir} resolves outside the workspace`);
    const files: AttachmentFileReceipt[] = [];
    let totalBytes = 0;
    for (const file of options.files) {
      const bytes = Buffer.from(file.content, file.encoding === 'base64' ? 'base64' : 'utf8');
      if (bytes.length !== file.bytes) {
        throw new ColloquyError(
          'INVALID_ARGUMENT',
          `Attachment "${file.name}" decodes to ${bytes.length} bytes, not the ${file.bytes} checked; send it again.`,
        );
      }
      await createFile(join(hostDir, file.name), bytes);
      const sha256 = createHash('sha256').update(bytes).digest('hex');
      files.push({
        name: file.name,
        bytes: bytes.length,
        sha256,
        ...(file.mimeType ? { mimeType: file.mimeType } : {}),
      });
      totalBytes += bytes.length;
    }
    const manifest = { id, createdAt: new Date(options.now).toISOString(), totalBytes, files };
    await createFile(
      join(hostDir, ATTACHMENT_MANIFEST),
      Buffer.from(`${JSON.stringify(manifest, null, 2)}\n`),
    );
    return {
      id,
      hostDir,
      receipt: { dir: options.mountPath ?? hostDir, manifest: ATTACHMENT_MANIFEST, files, totalBytes },
    };
  } catch (error) {
    await removeTreeNoFollow(hostDir, options.workspace).catch(() => undefined);
    if (isColloquyError(error)) throw error;
    throw new ColloquyError(
      'STORE_ERROR',
      `Writing the attachments failed: ${error instanceof Error ? error.message : String(error)}`,
      {},
      { cause: error },
    );
  }
}

/**
 * Removes a session's attachments (one folder by id, or all of them) without ever following a
 * symlink: a symlink on the way is unlinked itself (its target is left alone), folders are only
 * entered when they are real folders inside the workspace, and emptied parents are removed.
 *
 * @param workspace - the session's workspace folder
 * @param id - one attachment folder; default all
 * @returns true when something was removed
 */
export async function removeAttachments(workspace: string, id?: string): Promise<boolean> {
  if ((await kindOf(workspace)) !== 'dir') return false;
  let dir = workspace;
  for (const segment of ATTACHMENTS_SUBDIR) {
    dir = join(dir, segment);
    const kind = await kindOf(dir);
    if (kind === 'missing') return false;
    if (kind !== 'dir') {
      await unlink(dir);
      return true;
    }
  }
  const target = id === undefined ? dir : join(dir, id);
  const removed = await removeTreeNoFollow(target, workspace);
  // Tidy the emptied parents; a folder with other content stays.
  for (const folder of [
    join(workspace, ...ATTACHMENTS_SUBDIR),
    join(workspace, ATTACHMENTS_SUBDIR[0]),
    workspace,
  ]) {
    await rmdir(folder).catch(() => undefined);
  }
  return removed;
}

/**
 * Deletes `target` recursively without following symlinks: symlinks and files are unlinked, real
 * folders are emptied and removed, and a folder whose real path leaves `boundary` is refused.
 *
 * @param target - what to remove
 * @param boundary - a folder the removal must stay inside
 * @returns false when `target` did not exist
 * @throws `FORBIDDEN` when a folder resolves outside `boundary`
 */
export async function removeTreeNoFollow(target: string, boundary: string): Promise<boolean> {
  const kind = await kindOf(target);
  if (kind === 'missing') return false;
  if (kind !== 'dir') {
    await unlink(target);
    return true;
  }
  const real = await realpath(target);
  const realBoundary = await realpath(boundary);
  if (real !== realBoundary && !real.startsWith(realBoundary + sep)) {
    throw refused(`${target} resolves outside ${boundary}`);
  }
  for (const entry of await readdir(target)) await removeTreeNoFollow(join(target, entry), boundary);
  await rmdir(target);
  return true;
}

type EntryKind = 'missing' | 'dir' | 'symlink' | 'other';

async function kindOf(path: string): Promise<EntryKind> {
  try {
    const stats = await lstat(path);
    if (stats.isSymbolicLink()) return 'symlink';
    return stats.isDirectory() ? 'dir' : 'other';
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 'missing';
    throw error;
  }
}

async function ensureRealDir(path: string): Promise<void> {
  if ((await kindOf(path)) === 'missing') {
    try {
      await mkdir(path);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
  }
  await requireRealDir(path);
}

async function requireRealDir(path: string): Promise<void> {
  const kind = await kindOf(path);
  if (kind === 'symlink') throw refused(`${path} is a symbolic link`);
  if (kind !== 'dir') throw refused(`${path} is not a folder`);
}

async function createFile(path: string, bytes: Buffer): Promise<void> {
  let handle: Awaited<ReturnType<typeof open>>;
  try {
    handle = await open(path, CREATE_FLAGS, 0o600);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EEXIST' || code === 'ELOOP')
      throw refused(`${path} already exists (or is a symbolic link)`, error);
    throw error;
  }
  try {
    await handle.writeFile(bytes);
  } finally {
    await handle.close();
  }
}

function refused(why: string, cause?: unknown): ColloquyError {
  return new ColloquyError(
    'FORBIDDEN',
    `Refusing to write attachments: ${why}. Attachments are only written into a fresh folder, never through links.`,
    {},
    cause === undefined ? undefined : { cause },
  );
}
