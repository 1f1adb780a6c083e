import type { ChannelPlugin } from '@colloquy/core';
import { describe, expect, it } from 'vitest';
import { createCommandRunner } from './command-runner.js';

/**
 * A plugin with every member of the contract, each call recording its name and `this`. Typed
 * `Required<ChannelPlugin>`, so a member added to the contract fails to compile here until it is
 * listed, and the test below then checks that the wrapper forwards it.
 */
function pluginWithEveryCall(calls: { name: string; self: unknown }[]): Required<ChannelPlugin> {
  const plugin: Required<ChannelPlugin> = {
    id: 'every',
    capabilities: {
      threads: true,
      edits: true,
      reactions: false,
      media: false,
      typing: true,
      maxTextLength: 4000,
      markdown: 'commonmark',
    },
    async start() {
      calls.push({ name: 'start', self: this });
    },
    async stopReceiving() {
      calls.push({ name: 'stopReceiving', self: this });
    },
    async stop() {
      calls.push({ name: 'stop', self: this });
    },
    async send() {
      calls.push({ name: 'send', self: this });
      return { messageId: 'm1', messageIds: ['m1'] };
    },
    async sendTyping() {
      calls.push({ name: 'sendTyping', self: this });
    },
    async editMessage() {
      calls.push({ name: 'editMessage', self: this });
    },
    async deleteMessage() {
      calls.push({ name: 'deleteMessage', self: this });
    },
    async createThread() {
      calls.push({ name: 'createThread', self: this });
      return { channel: 'every', to: 'room', accountId: 'default', threadId: 't1' };
    },
    status() {
      calls.push({ name: 'status', self: this });
      return { state: 'connected' };
    },
  };
  return plugin;
}

describe('the command runner wrapper', () => {
  it("forwards every call of the plugin's contract to the plugin itself", async () => {
    const calls: { name: string; self: unknown }[] = [];
    const plugin = pluginWithEveryCall(calls);
    const wrapped = createCommandRunner(async () => ({ action: 'ignored' }) as never).wrap(plugin);
    const members = Object.keys(plugin).filter(
      (key) => typeof plugin[key as keyof ChannelPlugin] === 'function',
    );
    expect(
      Object.keys(wrapped)
        .filter((key) => typeof wrapped[key as keyof ChannelPlugin] === 'function')
        .sort(),
    ).toEqual(members.sort());
    const to = { channel: 'every', to: 'room', accountId: 'default' };
    await wrapped.start({} as never);
    await wrapped.stopReceiving?.();
    await wrapped.send(to, { text: 'hi' });
    await wrapped.sendTyping?.(to);
    await wrapped.editMessage?.(to, 'm1', { text: 'edited' });
    await wrapped.deleteMessage?.(to, 'm1');
    await wrapped.createThread?.({ parent: to, title: 'topic', sessionKey: 'main' });
    wrapped.status?.();
    await wrapped.stop();
    expect(calls.map((call) => call.name)).toEqual([
      'start',
      'stopReceiving',
      'send',
      'sendTyping',
      'editMessage',
      'deleteMessage',
      'createThread',
      'status',
      'stop',
    ]);
    expect(calls.every((call) => call.self === plugin)).toBe(true);
  });
});
