import type { ContentBlock } from '@colloquy/core';
import type { MessageProvenance } from '@colloquy/core/store';
import { oneLine } from './units.js';

/** The parts of a transcript message the renderers read. */
export interface RenderableMessage {
  role: string;
  content: string | ContentBlock[];
  timestamp?: number;
  toolName?: string;
  isError?: boolean;
  provenance?: MessageProvenance;
}

/**
 * The readable text of a message: its text blocks, and `[tool call name(...)]` for tool calls.
 * Thinking and image blocks are left out.
 *
 * @param message - a transcript message (raw or sanitised)
 * @returns the text
 */
export function messageText(message: RenderableMessage): string {
  if (typeof message.content === 'string') return message.content;
  const parts: string[] = [];
  for (const block of message.content) {
    if (block.type === 'text') parts.push(block.text);
    else if (block.type === 'toolCall') parts.push(`[tool call ${block.name}]`);
    else if (block.type === 'image') parts.push('[image]');
  }
  return parts.join('\n');
}

/**
 * Who wrote a message, as a short label: `user`, `assistant`, `tool sessions_list`, `from <key>`
 * (an inter-session message), `announce`.
 *
 * @param message - a transcript message
 * @returns the label
 */
export function authorLabel(message: RenderableMessage): string {
  if (message.role === 'toolResult') return `tool ${message.toolName ?? ''}`.trim();
  if (message.provenance?.kind === 'announce') return 'announce';
  if (message.provenance?.kind === 'inter_session') {
    return message.provenance.sourceSessionKey
      ? `from ${message.provenance.sourceSessionKey}`
      : 'inter-session';
  }
  return message.role;
}

/**
 * One line per message: `author: text`, each cut to `width` characters.
 *
 * @param messages - oldest first
 * @param width - the longest line
 * @returns the lines
 */
export function renderTranscriptLines(messages: readonly RenderableMessage[], width: number): string[] {
  return messages.map((m) => oneLine(`${authorLabel(m)}: ${messageText(m) || '(empty)'}`, width));
}
