import type { SessionRecord, StoredMessage } from '@colloquy/core';
import type { ChatMessage, SessionRow } from '../protocol/frames.js';

/**
 * Turns stored transcript messages into what the page shows: the visitors' own messages and the
 * assistant's text. Tool traffic, system entries and inter-session messages are left out.
 *
 * @param messages - transcript messages, oldest first
 * @param publicSender - maps a sender to its public face (never the raw visitor id)
 */
export function transcriptToChat(
  messages: readonly StoredMessage[],
  publicSender: (sender: { id: string; name?: string }) => { id: string; name: string },
): ChatMessage[] {
  const out: ChatMessage[] = [];
  for (const m of messages) {
    if (m.role !== 'user' && m.role !== 'assistant') continue;
    if (m.provenance) continue;
    const text = textOf(m.content).trim();
    if (text.length === 0) continue;
    const chat: ChatMessage = {
      id: m.platformMessageId ?? `seq_${m.seq}`,
      role: m.role,
      text,
      at: m.timestamp,
    };
    if (m.role === 'user' && m.sender) chat.sender = publicSender(m.sender);
    out.push(chat);
  }
  return out;
}

function textOf(content: StoredMessage['content']): string {
  if (typeof content === 'string') return content;
  return content
    .map((block) => (block.type === 'text' ? block.text : ''))
    .filter((text) => text.length > 0)
    .join('\n\n');
}

/**
 * One session as the owner panel shows it.
 *
 * @param session - the stored session
 */
export function toSessionRow(session: SessionRecord): SessionRow {
  const row: SessionRow = {
    key: session.key,
    kind: session.kind,
    agentId: session.agentId,
    status: session.status ?? 'idle',
    spawnDepth: session.spawnDepth ?? 0,
    updatedAt: session.updatedAt,
  };
  const label = session.label ?? session.displayName;
  if (label !== undefined) row.label = label;
  const channel = session.deliveryContext?.channel ?? session.channel ?? session.lastChannel;
  if (channel !== undefined) row.channel = channel;
  if (session.spawnedBy !== undefined) row.spawnedBy = session.spawnedBy;
  if (session.startedAt !== undefined) row.startedAt = session.startedAt;
  if (session.endedAt !== undefined) row.endedAt = session.endedAt;
  if (session.usage !== undefined) row.totalTokens = session.usage.totalTokens;
  if (session.model !== undefined) row.model = session.model;
  return row;
}
