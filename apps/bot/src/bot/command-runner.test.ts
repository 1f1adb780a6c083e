import type { ChannelPlugin } from '@colloquy/core';
import { describe, expect, it } from 'vitest';
import { createCommandRunner } from './command-runner.js';

const to = { channel: 'chat', to: 'room-1', accountId: 'default' };

/** A channel that records what it was asked to do. */
function recordingChannel(calls: string[]): ChannelPlugin {
  return {
    id: 'chat',
    capabilities: {
      threads: false,
      edits: true,
      reactions: false,
      media: false,
      typing: true,
      maxTextLength: 4000,
      markdown: 'commonmark',
    },
    start: async () => {},
    stop: async () => {},
    send: async (_to, message) => {
      calls.push(`send: ${message.text}`);
      return { messageId: 'm1', messageIds: ['m1'] };
    },
    sendTyping: async () => {
      calls.push('typing');
    },
    editMessage: async (_to, messageId, message) => {
      calls.push(`edit ${messageId}: ${message.text}`);
    },
    deleteMessage: async (_to, messageId) => {
      calls.push(`delete ${messageId}`);
    },
  };
}

describe('the command runner’s plugin wrapper', () => {
  it('keeps what the channel can do: sends, typing, edits and deletes reach the plugin', async () => {
    const calls: string[] = [];
    const wrapped = createCommandRunner(async () => ({ action: 'ignored', reason: 'unused' })).wrap(
      recordingChannel(calls),
    );
    await wrapped.send(to, { text: 'working' });
    await wrapped.sendTyping?.(to);
    await wrapped.editMessage?.(to, 'm1', { text: 'finished' });
    await wrapped.deleteMessage?.(to, 'm1');
    expect(calls).toEqual(['send: working', 'typing', 'edit m1: finished', 'delete m1']);
  });
});
