import type { MediaAttachment } from '@colloquy/core';
import type { proto, WAMessage } from '@whiskeysockets/baileys';
import { getContentType, normalizeMessageContent } from './baileys.js';

/** The text, media and reply/mention context of one WhatsApp message. */
export interface MessageContent {
  /** The typed text or the media caption; a short description for media without a caption. */
  text: string;
  media: MediaAttachment[];
  /** JIDs mentioned with @. */
  mentionedJids: string[];
  /** The message this one replies to, when it quotes one. */
  quoted?: { id: string; participant?: string };
}

type LongLike = number | { toNumber(): number } | null | undefined;
const toNumber = (value: LongLike): number | undefined =>
  typeof value === 'number'
    ? value
    : value && typeof value.toNumber === 'function'
      ? value.toNumber()
      : undefined;

const mediaRef = (msg: WAMessage): string => `whatsapp:${msg.key.remoteJid ?? ''}/${msg.key.id ?? ''}`;

function withOptional<T extends object>(base: T, extra: Record<string, unknown>): T {
  for (const [k, v] of Object.entries(extra))
    if (v !== undefined && v !== null && v !== '') (base as Record<string, unknown>)[k] = v;
  return base;
}

function mediaOf(msg: WAMessage, content: proto.IMessage): MediaAttachment | undefined {
  const ref = mediaRef(msg);
  if (content.imageMessage) {
    const m = content.imageMessage;
    return withOptional<MediaAttachment>(
      { kind: 'image', ref },
      { mimeType: m.mimetype, size: toNumber(m.fileLength), caption: m.caption },
    );
  }
  if (content.videoMessage) {
    const m = content.videoMessage;
    return withOptional<MediaAttachment>(
      { kind: 'video', ref },
      { mimeType: m.mimetype, size: toNumber(m.fileLength), caption: m.caption, durationSeconds: m.seconds },
    );
  }
  if (content.audioMessage) {
    const m = content.audioMessage;
    return withOptional<MediaAttachment>(
      { kind: m.ptt ? 'voice' : 'audio', ref },
      { mimeType: m.mimetype, size: toNumber(m.fileLength), durationSeconds: m.seconds },
    );
  }
  if (content.documentMessage) {
    const m = content.documentMessage;
    return withOptional<MediaAttachment>(
      { kind: 'document', ref },
      {
        mimeType: m.mimetype,
        size: toNumber(m.fileLength),
        fileName: m.fileName ?? m.title,
        caption: m.caption,
      },
    );
  }
  if (content.stickerMessage) {
    const m = content.stickerMessage;
    return withOptional<MediaAttachment>(
      { kind: 'sticker', ref },
      { mimeType: m.mimetype, size: toNumber(m.fileLength) },
    );
  }
  return undefined;
}

/** A one-line description of a media item, for messages that have no caption. */
export function describeMedia(media: MediaAttachment): string {
  const parts: string[] = [];
  if (media.fileName) parts.push(media.fileName);
  if (media.mimeType) parts.push(media.mimeType);
  if (media.durationSeconds !== undefined) parts.push(`${media.durationSeconds} s`);
  if (media.size !== undefined) parts.push(`${Math.max(1, Math.round(media.size / 1024))} KB`);
  const kind = media.kind === 'voice' ? 'voice note' : media.kind;
  return parts.length > 0 ? `[${kind}: ${parts.join(', ')}]` : `[${kind}]`;
}

/**
 * Reads what a person sent: text, media metadata, mentions and the quoted message. Returns
 * `undefined` for messages with nothing to answer (reactions, protocol and system messages).
 */
export function readMessageContent(msg: WAMessage): MessageContent | undefined {
  const content = normalizeMessageContent(msg.message);
  if (!content) return undefined;
  const type = getContentType(content);
  if (!type) return undefined;

  let text = '';
  if (content.conversation) text = content.conversation;
  else if (content.extendedTextMessage?.text) text = content.extendedTextMessage.text;

  const media = mediaOf(msg, content);
  if (media?.caption) text = media.caption;
  if (!text && !media) return undefined;
  if (!text && media) text = describeMedia(media);

  const typed = content[type];
  const contextInfo =
    typed && typeof typed === 'object' && 'contextInfo' in typed
      ? ((typed as { contextInfo?: proto.IContextInfo | null }).contextInfo ?? undefined)
      : undefined;

  const result: MessageContent = {
    text,
    media: media ? [media] : [],
    mentionedJids: contextInfo?.mentionedJid?.filter((j): j is string => typeof j === 'string') ?? [],
  };
  if (contextInfo?.stanzaId) {
    result.quoted = { id: contextInfo.stanzaId };
    if (contextInfo.participant) result.quoted.participant = contextInfo.participant;
  }
  return result;
}
