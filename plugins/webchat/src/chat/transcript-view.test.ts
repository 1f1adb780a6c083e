import type { SessionRecord, StoredMessage } from '@colloquy/core';
import { describe, expect, it } from 'vitest';
import { toSessionRow, transcriptToChat } from './transcript-view.js';

describe('transcript to chat', () => {
  it('keeps user and assistant text and drops tools, system and inter-session entries', () => {
    const messages: StoredMessage[] = [
      { seq: 1, role: 'user', content: 'hi', timestamp: 10, sender: { id: 'v_x', name: 'Ann' } },
      {
        seq: 2,
        role: 'assistant',
        content: [{ type: 'toolCall', id: 't', name: 'sessions_list', arguments: {} }],
        timestamp: 11,
      },
      { seq: 3, role: 'toolResult', content: 'secret rows', timestamp: 12, toolCallId: 't' },
      { seq: 4, role: 'system', content: 'system note', timestamp: 13 },
      { seq: 5, role: 'user', content: 'announce', timestamp: 14, provenance: { kind: 'announce' } },
      {
        seq: 6,
        role: 'assistant',
        content: [
          { type: 'thinking', thinking: 'hidden' },
          { type: 'text', text: 'Hello Ann' },
        ],
        timestamp: 15,
        platformMessageId: 'out_1',
      },
    ];
    const chat = transcriptToChat(messages, (s) => ({ id: `alias-${s.id}`, name: s.name ?? '?' }));
    expect(chat).toEqual([
      { id: 'seq_1', role: 'user', text: 'hi', at: 10, sender: { id: 'alias-v_x', name: 'Ann' } },
      { id: 'out_1', role: 'assistant', text: 'Hello Ann', at: 15 },
    ]);
  });
});

describe('session rows', () => {
  it('shows a sub-agent with its parent, depth, status, times and tokens', () => {
    const session: SessionRecord = {
      key: 'agent:main:subagent:abc',
      sessionId: 's1',
      agentId: 'main',
      kind: 'subagent',
      createdAt: 1,
      updatedAt: 5,
      label: 'researcher',
      spawnedBy: 'agent:main:main',
      spawnDepth: 1,
      status: 'killed',
      startedAt: 2,
      endedAt: 4,
      usage: { inputTokens: 10, outputTokens: 5, totalTokens: 15 },
      model: 'scripted/test',
    };
    expect(toSessionRow(session)).toEqual({
      key: 'agent:main:subagent:abc',
      kind: 'subagent',
      agentId: 'main',
      label: 'researcher',
      status: 'killed',
      spawnedBy: 'agent:main:main',
      spawnDepth: 1,
      startedAt: 2,
      endedAt: 4,
      updatedAt: 5,
      totalTokens: 15,
      model: 'scripted/test',
    });
  });

  it('defaults a fresh session to idle at depth 0', () => {
    const row = toSessionRow({
      key: 'k',
      sessionId: 's',
      agentId: 'main',
      kind: 'main',
      createdAt: 1,
      updatedAt: 1,
    });
    expect(row).toEqual({
      key: 'k',
      kind: 'main',
      agentId: 'main',
      status: 'idle',
      spawnDepth: 0,
      updatedAt: 1,
    });
  });
});
