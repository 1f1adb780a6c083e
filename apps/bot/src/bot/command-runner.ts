import type { ChannelPlugin, InboundMessage, OutboundMessage, SendResult } from '@colloquy/core';
import { parseSendCommand } from '@colloquy/core/internal';
import type { InboundOutcome } from '@colloquy/runtime';
import { parseSlashCommand } from '../commands/parse-slash-command.js';

/**
 * Gives plugins a `ChannelContext.runCommand` for native command UIs (Discord's slash commands):
 * the command goes through the runtime exactly like a typed message (session, owner check,
 * `/send on|off|inherit`, the commands hook, send policy), and the reply the runtime would send
 * back to that message is handed to the caller instead of being posted to the chat.
 */
export interface CommandRunner {
  /** Wraps a plugin so its `start` context carries `runCommand` and its command replies can be captured. */
  wrap(plugin: ChannelPlugin): ChannelPlugin;
  /** Runs a command message and returns the reply text. */
  runCommand(message: InboundMessage): Promise<string>;
}

/**
 * Creates the command runner.
 *
 * @param receive - the runtime's `receive`
 * @returns the runner
 */
export function createCommandRunner(
  receive: (inbound: InboundMessage) => Promise<InboundOutcome>,
): CommandRunner {
  /** channel + message id -> the reply texts captured for that message. */
  const captures = new Map<string, string[]>();
  let counter = 0;
  const captureKey = (channel: string, messageId: string) => `${channel}\u0000${messageId}`;

  async function runCommand(message: InboundMessage): Promise<string> {
    if (!parseSlashCommand(message.text) && !parseSendCommand(message.text.trim())) {
      return `Unknown command "${message.text.trim().split(/\s+/)[0]}". Try /help.`;
    }
    const key = captureKey(message.channel, message.messageId);
    const texts: string[] = [];
    captures.set(key, texts);
    try {
      const outcome = await receive(message);
      if (texts.length > 0) return texts.join('\n\n');
      switch (outcome.action) {
        case 'ignored':
          return `Not answered: ${outcome.reason}.`;
        case 'queued':
          return 'Passed to the assistant; its reply follows in the chat.';
        default:
          return 'Done. (Replies are switched off in this chat, so the answer is withheld.)';
      }
    } finally {
      captures.delete(key);
    }
  }

  function wrap(plugin: ChannelPlugin): ChannelPlugin {
    const send = async (
      to: Parameters<ChannelPlugin['send']>[0],
      message: OutboundMessage,
    ): Promise<SendResult> => {
      const sink =
        message.replyToMessageId === undefined
          ? undefined
          : captures.get(captureKey(plugin.id, message.replyToMessageId));
      if (sink) {
        sink.push(message.text);
        const id = `command-reply-${++counter}`;
        return { messageId: id, messageIds: [id] };
      }
      return plugin.send(to, message);
    };
    const wrapped: ChannelPlugin = {
      id: plugin.id,
      capabilities: plugin.capabilities,
      start: (ctx) => plugin.start({ ...ctx, runCommand }),
      stop: () => plugin.stop(),
      send,
    };
    if (plugin.sendTyping) wrapped.sendTyping = plugin.sendTyping.bind(plugin);
    if (plugin.editMessage) wrapped.editMessage = plugin.editMessage.bind(plugin);
    if (plugin.deleteMessage) wrapped.deleteMessage = plugin.deleteMessage.bind(plugin);
    if (plugin.createThread) wrapped.createThread = plugin.createThread.bind(plugin);
    if (plugin.status) wrapped.status = plugin.status.bind(plugin);
    return wrapped;
  }

  return { wrap, runCommand };
}
