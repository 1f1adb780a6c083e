/**
 * Validation of sub-agent attachments (`sessions_spawn` `attachments`): file names, encodings and
 * limits. Pure: nothing here reads or writes files; the runtime writes what passes.
 */
import { utf8ByteLength } from '../history/index.js';
import type { SpawnAttachment } from '../interfaces/gateway.js';

/** The manifest written beside the attachments; no attachment may take its name. */
export const ATTACHMENT_MANIFEST = 'manifest.json';
/** The longest attachment name, in UTF-8 bytes (the usual file-system limit). */
export const ATTACHMENT_NAME_MAX_BYTES = 255;

/** The limits of `tools.sessions_spawn.attachments`. */
export interface AttachmentLimits {
  /** The most files one spawn may attach. */
  maxFiles: number;
  /** The largest decoded file, in bytes. */
  maxFileBytes: number;
  /** The largest decoded total of all files, in bytes. */
  maxTotalBytes: number;
}

/** An attachment that passed every check, with its decoded size. */
export interface CheckedAttachment {
  /** The file name, checked to be plain. */
  name: string;
  /** How `content` is encoded (`utf8` when none was given). */
  encoding: 'utf8' | 'base64';
  /** The file content, as given. */
  content: string;
  /** The MIME type given with the file, checked for form. */
  mimeType?: string;
  /** Decoded size in bytes. */
  bytes: number;
}

/** The outcome of {@link checkAttachments}: every file, or one sentence naming the first problem. */
export type AttachmentsCheck =
  | { ok: true; files: CheckedAttachment[]; totalBytes: number }
  | { ok: false; error: string };

/** The outcome of {@link checkAttachmentName}. */
export type AttachmentNameCheck = { ok: true } | { ok: false; reason: string };

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const MIME = /^[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}\/[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}$/;

/**
 * Checks one attachment file name: a plain name that stays inside the attachments folder.
 * Refused: empty or blank names, `/` or `\`, any `..`, `.` alone, control and bidi-override
 * characters, leading or trailing spaces, names over 255 UTF-8 bytes, lone surrogates, and
 * `manifest.json` (reserved).
 *
 * @param name - the proposed name
 * @returns `{ ok: true }` or `{ ok: false, reason }`
 */
export function checkAttachmentName(name: string): AttachmentNameCheck {
  if (name.trim() === '') return { ok: false, reason: 'the name is empty' };
  if (name !== name.trim()) return { ok: false, reason: 'the name starts or ends with a space' };
  if (hasLoneSurrogate(name)) return { ok: false, reason: 'the name holds an unpaired surrogate' };
  if (name.includes('..')) return { ok: false, reason: 'the name holds ".."' };
  if (name.includes('/') || name.includes('\\')) {
    return { ok: false, reason: 'the name holds a path separator ("/" or "\\"); give a plain file name' };
  }
  if (name === '.') return { ok: false, reason: 'the name is "."' };
  if (hasControlCharacter(name)) return { ok: false, reason: 'the name holds a control character' };
  if (utf8ByteLength(name) > ATTACHMENT_NAME_MAX_BYTES) {
    return { ok: false, reason: `the name is longer than ${ATTACHMENT_NAME_MAX_BYTES} bytes` };
  }
  if (foldName(name) === ATTACHMENT_MANIFEST) {
    return { ok: false, reason: `"${ATTACHMENT_MANIFEST}" is reserved for the manifest` };
  }
  return { ok: true };
}

/** C0 and C1 controls, DEL, line/paragraph separators and bidirectional overrides/isolates. */
function hasControlCharacter(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c <= 0x1f || (c >= 0x7f && c <= 0x9f) || c === 0x2028 || c === 0x2029) return true;
    if ((c >= 0x202a && c <= 0x202e) || (c >= 0x2066 && c <= 0x2069)) return true;
  }
  return false;
}

function hasLoneSurrogate(text: string): boolean {
  return LONE_SURROGATE.test(text);
}

/** The form names are compared in for duplicates: NFC, lower case. */
export function foldName(name: string): string {
  return name.normalize('NFC').toLowerCase();
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';

/**
 * True when `text` is canonical base64 (RFC 4648, standard alphabet, padded): exactly the text
 * that encoding its own decoded bytes gives back. Whitespace, URL-safe letters, missing or extra
 * padding and non-zero padding bits are all refused.
 *
 * @param text - the claimed base64
 * @returns whether it round-trips
 */
export function isStrictBase64(text: string): boolean {
  if (text.length % 4 !== 0 || !BASE64.test(text)) return false;
  const padding = text.endsWith('==') ? 2 : text.endsWith('=') ? 1 : 0;
  if (padding === 0) return true;
  const last = ALPHABET.indexOf(text[text.length - padding - 1] ?? '');
  // With "==" the last data character carries 2 bits of data (4 must be zero), with "=" 4 (2 zero).
  return padding === 2 ? (last & 0b1111) === 0 : (last & 0b11) === 0;
}

/**
 * The decoded size of canonical base64.
 *
 * @param text - text for which {@link isStrictBase64} holds
 * @returns the byte count
 */
export function base64DecodedBytes(text: string): number {
  const padding = text.endsWith('==') ? 2 : text.endsWith('=') ? 1 : 0;
  return (text.length / 4) * 3 - padding;
}

/**
 * Checks a whole attachment list against the limits, before anything is written: names (see
 * {@link checkAttachmentName}), duplicates (case-insensitive, NFC), encodings (strict base64,
 * well-formed UTF-8 text), MIME types, `maxFiles`, `maxFileBytes` and `maxTotalBytes`.
 *
 * @param attachments - what the model passed
 * @param limits - `tools.sessions_spawn.attachments`
 * @returns the checked files with their sizes, or the first problem as one sentence
 * @example
 * ```ts
 * const checked = checkAttachments([{ name: 'notes.md', content: '# Notes' }], config.tools.sessions_spawn.attachments);
 * if (!checked.ok) return { status: 'error', error: checked.error };
 * ```
 */
export function checkAttachments(
  attachments: readonly SpawnAttachment[],
  limits: AttachmentLimits,
): AttachmentsCheck {
  if (attachments.length > limits.maxFiles) {
    return {
      ok: false,
      error: `${attachments.length} attachments is over the limit of ${limits.maxFiles} (tools.sessions_spawn.attachments.maxFiles); send fewer files.`,
    };
  }
  const seen = new Map<string, string>();
  const files: CheckedAttachment[] = [];
  let totalBytes = 0;
  for (const [index, attachment] of attachments.entries()) {
    const label = `Attachment ${index + 1}`;
    if (typeof attachment?.name !== 'string' || typeof attachment.content !== 'string') {
      return { ok: false, error: `${label} needs a string "name" and a string "content".` };
    }
    const { name, content } = attachment;
    const named = checkAttachmentName(name);
    if (!named.ok)
      return { ok: false, error: `${label} (${JSON.stringify(name)}) is refused: ${named.reason}.` };
    const folded = foldName(name);
    const earlier = seen.get(folded);
    if (earlier !== undefined) {
      return {
        ok: false,
        error: `${label} (${JSON.stringify(name)}) duplicates ${JSON.stringify(earlier)} (names are compared without case); rename one of them.`,
      };
    }
    seen.set(folded, name);
    const encoding = attachment.encoding ?? 'utf8';
    if (encoding !== 'utf8' && encoding !== 'base64') {
      return { ok: false, error: `${label} (${JSON.stringify(name)}): encoding must be "utf8" or "base64".` };
    }
    let bytes: number;
    if (encoding === 'base64') {
      if (!isStrictBase64(content)) {
        return {
          ok: false,
          error: `${label} (${JSON.stringify(name)}) is not valid base64: use the standard alphabet with "=" padding and no spaces or line breaks.`,
        };
      }
      bytes = base64DecodedBytes(content);
    } else {
      if (hasLoneSurrogate(content)) {
        return {
          ok: false,
          error: `${label} (${JSON.stringify(name)}) holds an unpaired surrogate and is not valid UTF-8 text; send it as base64.`,
        };
      }
      bytes = utf8ByteLength(content);
    }
    if (attachment.mimeType !== undefined && !MIME.test(attachment.mimeType)) {
      return {
        ok: false,
        error: `${label} (${JSON.stringify(name)}): mimeType must look like "type/subtype", e.g. "text/plain".`,
      };
    }
    if (bytes > limits.maxFileBytes) {
      return {
        ok: false,
        error: `${label} (${JSON.stringify(name)}) is ${bytes} bytes, over the limit of ${limits.maxFileBytes} (tools.sessions_spawn.attachments.maxFileBytes).`,
      };
    }
    totalBytes += bytes;
    if (totalBytes > limits.maxTotalBytes) {
      return {
        ok: false,
        error: `The attachments add up to more than ${limits.maxTotalBytes} bytes (tools.sessions_spawn.attachments.maxTotalBytes); send less.`,
      };
    }
    files.push({
      name,
      encoding,
      content,
      bytes,
      ...(attachment.mimeType !== undefined ? { mimeType: attachment.mimeType } : {}),
    });
  }
  return { ok: true, files, totalBytes };
}

/**
 * What replaces an attachment's content in stored transcripts.
 *
 * @param bytes - the decoded size
 * @param sha256 - the hex digest of the decoded bytes
 * @returns `[attachment content omitted: N bytes, sha256 <hex>]`
 */
export function attachmentPlaceholder(bytes: number, sha256: string): string {
  return `[attachment content omitted: ${bytes} bytes, sha256 ${sha256}]`;
}
