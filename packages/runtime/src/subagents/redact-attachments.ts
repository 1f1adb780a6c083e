import { createHash } from 'node:crypto';
import type { ContentBlock, TranscriptMessage } from '@colloquy/core';
import { attachmentPlaceholder } from '@colloquy/core/internal';

/**
 * Replaces the content of every `sessions_spawn` attachment in the tool-call arguments of
 * transcript messages with `[attachment content omitted: N bytes, sha256 …]`, so the file content
 * never reaches the stored transcript (the model saw it; the files hold it). Messages without such
 * a call are returned as they are (same objects).
 *
 * @param messages - messages about to be stored
 * @returns the messages to store
 */
export function redactSpawnAttachments(messages: TranscriptMessage[]): TranscriptMessage[] {
  if (!messages.some(hasSpawnCall)) return messages;
  return messages.map((message) => {
    if (!hasSpawnCall(message) || typeof message.content === 'string') return message;
    return { ...message, content: message.content.map(redactBlock) };
  });
}

function hasSpawnCall(message: TranscriptMessage): boolean {
  return (
    typeof message.content !== 'string' &&
    message.content.some((block) => block.type === 'toolCall' && block.name === 'sessions_spawn')
  );
}

function redactBlock(block: ContentBlock): ContentBlock {
  if (block.type !== 'toolCall' || block.name !== 'sessions_spawn') return block;
  const args = parseArgs(block.arguments);
  if (!args) {
    // Arguments nobody can read may still hold file content: keep none of them.
    return {
      ...block,
      arguments: '[sessions_spawn arguments omitted: not a JSON object]',
      partialJson: undefined,
    };
  }
  if (!Array.isArray(args.attachments)) return block;
  const attachments = args.attachments.map((item: unknown) => {
    if (typeof item !== 'object' || item === null) return item;
    const file = item as { content?: unknown; encoding?: unknown };
    if (typeof file.content !== 'string') return item;
    const bytes = Buffer.from(file.content, file.encoding === 'base64' ? 'base64' : 'utf8');
    const sha256 = createHash('sha256').update(bytes).digest('hex');
    return { ...file, content: attachmentPlaceholder(bytes.length, sha256) };
  });
  const redacted: ContentBlock = { ...block, arguments: { ...args, attachments } };
  if (redacted.type === 'toolCall' && redacted.partialJson !== undefined) redacted.partialJson = '[omitted]';
  return redacted;
}

function parseArgs(value: unknown): Record<string, unknown> | undefined {
  if (typeof value === 'string') {
    try {
      return parseArgs(JSON.parse(value));
    } catch {
      return undefined;
    }
  }
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}
