/**
 * Sanitising transcript messages before a model or a person reads them (sessions_history,
 * sessions_list previews): redaction, truncation, media and signature stripping, and a hard cap on
 * the size of the whole answer. What is stored is never touched.
 */
import type { ContentBlock, MediaAttachment, TranscriptMessage } from '../interfaces/records.js';
import { createRedactor, type Redactor } from './redact-secrets.js';
import { truncateText, utf8ByteLength } from './truncate-text.js';

/** Text fields are cut to this many UTF-16 units. */
export const HISTORY_TEXT_LIMIT = 4000;

/** The UTF-8 JSON of the returned messages array never exceeds this many bytes (80 KiB). */
export const HISTORY_MAX_BYTES = 80 * 1024;

/** Returned alone when not even the newest message fits in `HISTORY_MAX_BYTES`. */
export const HISTORY_OMITTED_PLACEHOLDER = Object.freeze({
  role: 'assistant',
  content: '[sessions_history omitted: message too large]',
} as const);

/** Options of `sanitizeHistory`. */
export interface SanitizeHistoryOptions {
  /** Keep `toolResult` messages. Default false. */
  includeTools?: boolean;
  /** Exact secret values to redact besides the built-in patterns (e.g. `config.redaction.secrets`). */
  secrets?: readonly string[];
}

/**
 * A message as returned by `sanitizeHistory`: no `details`, `usage` or `cost`; `timestamp` is absent
 * only on the too-large placeholder. Other fields (e.g. a stored message's `seq`) are kept.
 */
export type SanitizedMessage = Omit<TranscriptMessage, 'details' | 'usage' | 'cost' | 'timestamp'> & {
  timestamp?: number;
  seq?: number;
};

/** The result of `sanitizeHistory`. */
export interface SanitizedHistory {
  /** The sanitised messages, oldest first. */
  messages: SanitizedMessage[];
  /** True when any text was cut to `HISTORY_TEXT_LIMIT`. */
  truncated: boolean;
  /** True when any secret was redacted. */
  redacted: boolean;
  /** True when older messages were dropped (or all replaced by the placeholder) to fit `HISTORY_MAX_BYTES`. */
  hardCapped: boolean;
  /** UTF-8 bytes of `JSON.stringify(messages)`. */
  totalBytes: number;
  /** How many stored content blocks could not be read and were dropped (present only when some were). */
  droppedBlocks?: number;
}

/**
 * Prepares transcript messages for reading: drops `toolResult` messages unless `includeTools`;
 * redacts secrets in every text field (`content`, `text`, `thinking`, `partialJson`, tool-call
 * arguments, media captions) and then cuts each to 4000 UTF-16 units (never splitting a surrogate
 * pair) followed by `\n…(truncated)…`; removes `thinkingSignature`, image `data` (adding
 * `omitted: true` and `bytes`), and message-level `details`, `usage` and `cost`. Finally keeps the
 * newest messages whose JSON fits in 80 KiB, or returns only `HISTORY_OMITTED_PLACEHOLDER`.
 * The input is never modified; the output shares no objects with it.
 *
 * @param messages - transcript messages, oldest first
 * @param options - `includeTools` (default false) and extra `secrets`
 * @returns the sanitised messages, oldest first, and what was done to them
 *
 * @example
 * ```ts
 * const tail = await store.readTranscript(session.key, { limit: 50 });
 * const { messages, hardCapped } = sanitizeHistory(tail, { secrets: config.redaction.secrets });
 * ```
 */
export function sanitizeHistory(
  messages: readonly TranscriptMessage[],
  options: SanitizeHistoryOptions = {},
): SanitizedHistory {
  const state = { redactor: createRedactor(options.secrets), truncated: false, redacted: false, dropped: 0 };
  const kept = messages.filter((m) => keepsMessage(m, options.includeTools));
  const cleaned = kept.map((m) => sanitizeMessage(m, state));
  const fitted = fitNewest(cleaned);
  return {
    messages: fitted.messages,
    truncated: state.truncated,
    redacted: state.redacted,
    ...fitted.cap,
    ...(state.dropped > 0 ? { droppedBlocks: state.dropped } : {}),
  };
}

/**
 * Whether `sanitizeHistory` keeps a message: every role but `toolResult`, which it keeps only with
 * `includeTools`. A page of history covers the messages it drops without showing them.
 *
 * @param message - a transcript message
 * @param includeTools - as `SanitizeHistoryOptions.includeTools` (default false)
 */
export function keepsMessage(message: Pick<TranscriptMessage, 'role'>, includeTools = false): boolean {
  return includeTools || message.role !== 'toolResult';
}

// --- one message ---

interface SanitizeState {
  redactor: Redactor;
  truncated: boolean;
  redacted: boolean;
  /** Content blocks that could not be read and were dropped. */
  dropped: number;
}

function sanitizeMessage(message: TranscriptMessage, state: SanitizeState): SanitizedMessage {
  const { details: _details, usage: _usage, cost: _cost, content, media, ...rest } = message;
  const out: SanitizedMessage = { ...structuredClone(rest), content: sanitizeContent(content, state) };
  if (Array.isArray(media)) out.media = media.map((item) => sanitizeMedia(item, state));
  return out;
}

function sanitizeContent(
  content: TranscriptMessage['content'],
  state: SanitizeState,
): TranscriptMessage['content'] {
  if (typeof content === 'string') return cleanText(content, state);
  if (Array.isArray(content)) {
    const readable = content.filter(isReadableBlock);
    state.dropped += content.length - readable.length;
    return readable.map((block) => sanitizeBlock(block, state));
  }
  // Neither text nor blocks (null, a number, an object): unreadable as a whole.
  state.dropped += 1;
  return '';
}

/** A block sanitising can read: an object with a string `type` whose text fields are strings. */
function isReadableBlock(block: unknown): block is ContentBlock {
  if (typeof block !== 'object' || block === null || Array.isArray(block)) return false;
  const b = block as Record<string, unknown>;
  if (typeof b.type !== 'string') return false;
  if (b.type === 'text') return typeof b.text === 'string';
  if (b.type === 'thinking') return typeof b.thinking === 'string';
  return true;
}

function sanitizeBlock(block: ContentBlock, state: SanitizeState): ContentBlock {
  switch (block.type) {
    case 'text':
      return { ...structuredClone(block), text: cleanText(block.text, state) };
    case 'thinking': {
      const { thinkingSignature: _signature, ...kept } = block;
      return { ...structuredClone(kept), thinking: cleanText(block.thinking, state) };
    }
    case 'image': {
      // A block that carries no data, only a reference (a `url`), is returned as it is.
      if (block.data === undefined && typeof (block as { url?: unknown }).url === 'string') {
        return structuredClone(block);
      }
      const { data, ...kept } = block;
      return {
        ...structuredClone(kept),
        omitted: true,
        bytes: typeof data === 'string' ? data.length : (block.bytes ?? 0),
      };
    }
    case 'toolCall': {
      const out: Extract<ContentBlock, { type: 'toolCall' }> = {
        ...structuredClone(block),
        arguments: cleanDeep(block.arguments, state, 0),
      };
      if (typeof block.partialJson === 'string') out.partialJson = cleanText(block.partialJson, state);
      return out;
    }
    default: {
      // A block type this version does not know: clean every string in it, drop signatures.
      const { thinkingSignature: _signature, ...kept } = block as Record<string, unknown>;
      return cleanDeep(kept, state, 0) as ContentBlock;
    }
  }
}

function sanitizeMedia(item: MediaAttachment, state: SanitizeState): MediaAttachment {
  if (typeof item !== 'object' || item === null) return item;
  const out = structuredClone(item);
  if (typeof item.caption === 'string') out.caption = cleanText(item.caption, state);
  return out;
}

function cleanText(text: string, state: SanitizeState): string {
  if (typeof text !== 'string') return text;
  const redaction = state.redactor(text);
  if (redaction.redacted) state.redacted = true;
  const cut = truncateText(redaction.text, HISTORY_TEXT_LIMIT);
  if (cut.truncated) state.truncated = true;
  return cut.text;
}

const MAX_DEPTH = 32;

/** A copy of a JSON-like value with every string cleaned (redacted and cut). */
function cleanDeep(value: unknown, state: SanitizeState, depth: number): unknown {
  if (typeof value === 'string') return cleanText(value, state);
  if (typeof value !== 'object' || value === null) return value;
  if (depth >= MAX_DEPTH) return '[omitted: nested too deeply]';
  if (Array.isArray(value)) return value.map((item) => cleanDeep(item, state, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [key, inner] of Object.entries(value)) out[key] = cleanDeep(inner, state, depth + 1);
  return out;
}

// --- hard cap ---

function fitNewest(messages: SanitizedMessage[]): {
  messages: SanitizedMessage[];
  cap: { hardCapped: boolean; totalBytes: number };
} {
  // JSON.stringify of an array is "[" + items joined by "," + "]".
  let total = 2;
  let start = messages.length;
  while (start > 0) {
    const size = utf8ByteLength(JSON.stringify(messages[start - 1]));
    const next = total + size + (start === messages.length ? 0 : 1);
    if (next > HISTORY_MAX_BYTES) break;
    total = next;
    start -= 1;
  }
  if (start === 0) return { messages, cap: { hardCapped: false, totalBytes: total } };
  if (start === messages.length) {
    const placeholder: SanitizedMessage = { ...HISTORY_OMITTED_PLACEHOLDER };
    return {
      messages: [placeholder],
      cap: { hardCapped: true, totalBytes: utf8ByteLength(JSON.stringify([placeholder])) },
    };
  }
  return { messages: messages.slice(start), cap: { hardCapped: true, totalBytes: total } };
}
