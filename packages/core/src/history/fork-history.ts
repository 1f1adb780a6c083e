import type { InheritedMessage } from '../interfaces/gateway.js';
import type { ContentBlock, TranscriptMessage } from '../interfaces/records.js';
import { sanitizeHistory } from './sanitize-history.js';
import { utf8ByteLength } from './truncate-text.js';

/** A forked sub-agent inherits at most this many messages. */
export const FORK_MAX_MESSAGES = 20;
/** ...and at most this many UTF-8 bytes of their JSON (40 KiB). */
export const FORK_MAX_BYTES = 40 * 1024;

/** The result of {@link forkHistory}. */
export interface ForkedHistory {
  /** Oldest first: user and assistant text only. */
  messages: InheritedMessage[];
  /** True when a secret was redacted. */
  redacted: boolean;
  /** How many messages with text were left out by the caps. */
  dropped: number;
}

/**
 * The recent history a forked sub-agent inherits: sanitised as `sessions_history` does (secrets
 * redacted, texts cut, tool results dropped), reduced to the text of user and assistant messages
 * (tool calls, thinking and images are left out), then the newest messages that fit in
 * {@link FORK_MAX_MESSAGES} and {@link FORK_MAX_BYTES}.
 *
 * @param messages - the requester's transcript tail, oldest first
 * @param secrets - configured secret values to redact besides the built-in patterns
 * @returns the messages to seed the child with
 */
export function forkHistory(
  messages: readonly Pick<TranscriptMessage, 'role' | 'content' | 'timestamp'>[],
  secrets: readonly string[] = [],
): ForkedHistory {
  const sanitized = sanitizeHistory(messages as TranscriptMessage[], { secrets });
  const texts: InheritedMessage[] = [];
  for (const message of sanitized.messages) {
    if (message.role !== 'user' && message.role !== 'assistant') continue;
    const content = textOf(message.content).trim();
    if (content === '') continue;
    texts.push({
      role: message.role,
      content,
      ...(message.timestamp ? { timestamp: message.timestamp } : {}),
    });
  }
  const kept: InheritedMessage[] = [];
  let bytes = 2;
  for (let i = texts.length - 1; i >= 0 && kept.length < FORK_MAX_MESSAGES; i--) {
    const size = utf8ByteLength(JSON.stringify(texts[i])) + 1;
    if (bytes + size > FORK_MAX_BYTES) break;
    bytes += size;
    kept.unshift(texts[i]!);
  }
  return { messages: kept, redacted: sanitized.redacted, dropped: texts.length - kept.length };
}

function textOf(content: string | ContentBlock[]): string {
  if (typeof content === 'string') return content;
  return content
    .filter((block): block is Extract<ContentBlock, { type: 'text' }> => block.type === 'text')
    .map((block) => block.text)
    .join('\n');
}
