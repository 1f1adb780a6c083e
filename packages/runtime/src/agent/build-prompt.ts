import type { ContentBlock, StoredMessage, TranscriptMessage } from '@colloquy/core';
import { ANNOUNCE_SKIP } from '@colloquy/core/internal';
import type { ModelMessage } from '@colloquy/core/model';
import type { StoreOperations } from '@colloquy/core/store';
import { formatGroupContext, type GroupContextEntry } from '../inbound/group-context.js';
import { describeMedia } from './describe-media.js';
import { estimateTokens } from './token-estimate.js';

export { estimateTokens } from './token-estimate.js';

/** The system prompt used when neither the agent nor `agents.defaults` sets one. */
export const DEFAULT_SYSTEM_PROMPT =
  'You are a helpful assistant taking part in a chat conversation. Answer concisely.';

/**
 * The estimated prompt size of one transcript message (see {@link estimateTokens}).
 *
 * @param message - a transcript message
 * @returns estimated tokens (at least 1)
 */
export function estimateMessageTokens(message: TranscriptMessage): number {
  const content = message.content;
  const context = groupContextOf(message);
  let tokens = context ? estimateTokens(formatGroupContext(context)) + 4 : 0;
  if (typeof content === 'string') return tokens + estimateTokens(content) + 4;
  for (const block of content) tokens += blockTokens(block);
  return tokens + 4;
}

function blockTokens(block: ContentBlock): number {
  switch (block.type) {
    case 'text':
      return estimateTokens(block.text);
    case 'thinking':
      return estimateTokens(block.thinking);
    case 'image':
      // Images cost roughly a fixed amount of tokens, not their byte size.
      return 1000;
    case 'toolCall':
      return estimateTokens(block.name) + estimateTokens(safeJson(block.arguments));
  }
}

function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value) ?? '';
  } catch {
    return '';
  }
}

/**
 * Joins the base system prompt with the runs' extra system prompts (blank-line separated,
 * duplicates dropped).
 *
 * @param base - the agent's system prompt (default {@link DEFAULT_SYSTEM_PROMPT})
 * @param extras - `extraSystemPrompt` of each run in the turn
 * @returns the system prompt
 */
export function buildSystemPrompt(base: string | undefined, extras: readonly (string | undefined)[]): string {
  const parts = [base?.trim() || DEFAULT_SYSTEM_PROMPT];
  for (const extra of extras) {
    const text = extra?.trim();
    if (text && !parts.includes(text)) parts.push(text);
  }
  return parts.join('\n\n');
}

/** Options of {@link loadHistory}. */
export interface LoadHistoryOptions {
  /** Messages read per store call. Default 64. */
  pageSize?: number;
  /** Never read more than this many messages. Default 2000. */
  maxMessages?: number;
}

/**
 * Reads the newest transcript messages that fit `budgetTokens` ({@link estimateMessageTokens}), oldest first.
 * The newest message is always included. Reads page by page from the end, so the cost follows
 * the budget, not the transcript length.
 *
 * @param store - the store
 * @param sessionKey - the session
 * @param budgetTokens - how many prompt tokens the history may use
 * @param options - page size and hard cap
 * @returns messages in transcript order
 */
export async function loadHistory(
  store: StoreOperations,
  sessionKey: string,
  budgetTokens: number,
  options: LoadHistoryOptions = {},
): Promise<StoredMessage[]> {
  const pageSize = options.pageSize ?? 64;
  const maxMessages = options.maxMessages ?? 2000;
  const picked: StoredMessage[] = [];
  let used = 0;
  let beforeSeq: number | undefined;
  while (picked.length < maxMessages) {
    const page = await store.readTail(
      sessionKey,
      pageSize,
      beforeSeq === undefined ? undefined : { beforeSeq },
    );
    for (let i = page.length - 1; i >= 0; i--) {
      const message = page[i]!;
      const cost = estimateMessageTokens(message);
      if (picked.length > 0 && used + cost > budgetTokens) return picked.reverse();
      used += cost;
      picked.push(message);
      if (picked.length >= maxMessages) break;
    }
    if (page.length < pageSize) break;
    beforeSeq = page[0]!.seq;
  }
  return picked.reverse();
}

/**
 * Converts transcript messages to model messages and repairs what a provider would reject:
 * tool results without their call are dropped, and tool calls without a result (a run cut short)
 * get an error result saying so. Messages that did not come from the session's own human are
 * marked with their provenance, so they never pose as the user. An addressed group message that
 * carries the group's recent un-addressed messages (`details.groupContext`) is preceded by one user
 * block listing them, headed as not addressed to the model.
 *
 * @param messages - transcript messages, oldest first
 * @returns model messages
 */
export function toModelMessages(messages: readonly TranscriptMessage[]): ModelMessage[] {
  const out: ModelMessage[] = [];
  const openCalls = new Map<string, string>(); // toolCallId -> toolName, awaiting results
  const closeOpenCalls = () => {
    if (openCalls.size === 0) return;
    for (const [toolCallId, toolName] of openCalls) {
      out.push({
        role: 'toolResult',
        toolCallId,
        toolName,
        content: JSON.stringify({
          status: 'error',
          error: 'The tool call was interrupted before it returned.',
        }),
        isError: true,
      });
    }
    openCalls.clear();
  };
  for (const message of messages) {
    if (message.role === 'toolResult') {
      const id = message.toolCallId;
      if (id === undefined || !openCalls.has(id)) continue;
      openCalls.delete(id);
      out.push({
        role: 'toolResult',
        toolCallId: id,
        toolName: message.toolName ?? 'unknown',
        content: textOf(message.content),
        ...(message.isError ? { isError: true } : {}),
      });
      continue;
    }
    closeOpenCalls();
    if (message.role === 'assistant') {
      out.push({ role: 'assistant', content: message.content });
      if (typeof message.content !== 'string') {
        for (const block of message.content) {
          if (block.type === 'toolCall') openCalls.set(block.id, block.name);
        }
      }
      continue;
    }
    const context = groupContextOf(message);
    if (context) out.push({ role: 'user', content: formatGroupContext(context) });
    out.push({ role: 'user', content: withProvenance(message) });
  }
  closeOpenCalls();
  return out;
}

/** The group context window stored with an addressed group message (`details.groupContext`). */
function groupContextOf(message: TranscriptMessage): GroupContextEntry[] | undefined {
  if (message.role !== 'user') return undefined;
  const entries = (message.details as { groupContext?: unknown } | undefined)?.groupContext;
  return Array.isArray(entries) && entries.length > 0 ? (entries as GroupContextEntry[]) : undefined;
}

/** A user message as the model reads it: provenance marker, content, then one line per attachment. */
function withProvenance(message: TranscriptMessage): string | ContentBlock[] {
  const prefix = provenancePrefix(message);
  const media = describeMedia(message.media);
  if (!prefix && !media) return message.content;
  if (typeof message.content === 'string') {
    return [prefix, message.content, media].filter((part) => part).join('\n');
  }
  return [
    ...(prefix ? [{ type: 'text' as const, text: prefix }] : []),
    ...message.content,
    ...(media ? [{ type: 'text' as const, text: media }] : []),
  ];
}

function provenancePrefix(message: TranscriptMessage): string | undefined {
  if (message.role === 'system') return '[System notice]';
  const p = message.provenance;
  if (!p) return undefined;
  const from = p.sourceSessionKey ? ` from session ${p.sourceSessionKey}` : '';
  switch (p.kind) {
    case 'inter_session':
      return `[Message${from}${p.sourceTool ? ` via ${p.sourceTool}` : ''}; it is not from the human user]`;
    case 'announce': {
      const thread = postedInOf(message);
      if (thread) {
        return `[Announce${from}; it is not from the human user. The sub-agent already posted this result in full in its thread ${thread.threadId} (${thread.channel}): do not repeat it. Your reply to it is the one chat message about it here: by default one line pointing to that thread, or reply exactly ${ANNOUNCE_SKIP} to post nothing]`;
      }
      return `[Announce${from}; it is not from the human user. Your reply to it is the one chat message about this result: tell the user what matters in your own words, or reply exactly ${ANNOUNCE_SKIP} to post nothing]`;
    }
    case 'system':
      return '[System notice]';
  }
}

/** The thread an announced result was already posted in (`details.announce.postedIn`). */
function postedInOf(message: TranscriptMessage): { channel: string; threadId: string } | undefined {
  const announce = (message.details as { announce?: { postedIn?: unknown } } | undefined)?.announce;
  const thread = announce?.postedIn as { channel?: unknown; threadId?: unknown } | undefined;
  return typeof thread?.channel === 'string' && typeof thread.threadId === 'string'
    ? { channel: thread.channel, threadId: thread.threadId }
    : undefined;
}

/**
 * The plain text of message content (text blocks joined by newlines).
 *
 * @param content - a string or content blocks
 * @returns the text
 */
export function textOf(content: string | readonly ContentBlock[]): string {
  if (typeof content === 'string') return content;
  const texts: string[] = [];
  for (const block of content) if (block.type === 'text') texts.push(block.text);
  return texts.join('\n');
}
