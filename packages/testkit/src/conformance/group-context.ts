import { type ChannelContext, type ChannelPlugin, type InboundMessage, resolveConfig } from '@colloquy/core';
import type { ModelMessage } from '@colloquy/core/model';
import { MemoryStore } from '@colloquy/core/store';
import { createRuntime } from '@colloquy/runtime';
import { describe, expect, it } from 'vitest';
import { createScriptedModel } from '../index.js';
import type { ChannelConformanceFixture, ChannelConformanceOptions } from './fixture.js';

const REPLY = 'conformance: answered with the group context';
const CHATTER = 'conformance chatter the bot only overhears';
const QUESTION = 'conformance question for the bot';

/**
 * Registers the runtime-level group context case of the conformance suite: in the fixture's first
 * group (or channel) chat, a message that does not address the bot and then one that does go
 * through the plugin into the real runtime (scripted model). The plugin must hand both to
 * `ctx.receive` (`mentionsBot` false, then true): only the second starts a run, and the model reads
 * the first in the block of recent group messages not addressed to it, before the question. The
 * reply lands in that chat. Skipped for plugins without group or channel chats.
 *
 * @param name - the suite title
 * @param setup - builds a fresh fixture
 * @param options - the inbound timeout
 */
export function runGroupContextConformance(
  name: string,
  setup: () => ChannelConformanceFixture | Promise<ChannelConformanceFixture>,
  options: ChannelConformanceOptions = {},
): void {
  const timeoutMs = Math.max(options.inboundTimeoutMs ?? 5000, 5000);

  describe(`channel plugin conformance: ${name}, group context (runtime)`, () => {
    it('hands an un-addressed group message to the runtime, which shows it to the model when the bot is addressed', async (test) => {
      const fixture = await setup();
      try {
        const group = (['group', 'channel'] as const)
          .map((chatType) => ({ chatType, chatId: fixture.chats[chatType] }))
          .find(
            (chat): chat is { chatType: 'group' | 'channel'; chatId: string } => chat.chatId !== undefined,
          );
        if (group === undefined) {
          test.skip('fixture.chats lists no group or channel');
          return;
        }
        const model = createScriptedModel(() => REPLY);
        const received: InboundMessage[] = [];
        const store = new MemoryStore();
        const runtime = createRuntime({
          config: resolveConfig({ agents: { defaults: { model: 'scripted/conformance' } } }),
          store,
          plugins: [withReceiveTap(fixture.plugin, received)],
          models: () => ({ provider: model, modelId: 'conformance' }),
        });
        await runtime.start();
        try {
          await fixture.ready?.();
          const [first, second] = fixture.peers;
          await fixture.inject({ ...group, sender: first, text: CHATTER, mentionBot: false });
          // The overheard message is kept in memory only: the question must come after the runtime took it.
          await waitFor(
            () => received.some((m) => m.text.includes(CHATTER)),
            timeoutMs,
            'the overheard message did not reach ctx.receive',
          );
          await fixture.inject({ ...group, sender: second, text: QUESTION, mentionBot: true });
          await waitFor(() => model.requests.length > 0, timeoutMs, 'the model was not called');
          const messages = model.requests[0]!.messages;
          const question = messages.findIndex((m) => textOf(m).includes(QUESTION));
          const context = messages.findIndex((m) => textOf(m).includes(CHATTER));
          expect(question, 'the addressed message reached the model').toBeGreaterThanOrEqual(0);
          expect(context, 'the overheard message is shown to the model').toBeGreaterThanOrEqual(0);
          expect(context, 'the group context comes before the question').toBeLessThan(question);
          expect(messages[context]!.role).toBe('user');
          expect(textOf(messages[context]!)).toContain('not addressed to you');
          expect(textOf(messages[question]!)).not.toContain(CHATTER);
          await waitFor(
            async () => (await fixture.readSent()).some((m) => m.text.includes(REPLY)),
            timeoutMs,
            'the reply did not reach the platform',
          );
          const reply = (await fixture.readSent()).find((m) => m.text.includes(REPLY))!;
          expect(reply.chatId, 'the reply went to the group').toBe(group.chatId);
          expect(await store.listRuns(), 'only the addressed message started a run').toHaveLength(1);
        } finally {
          await runtime.shutdown({ drainMs: 500 });
        }
      } finally {
        await fixture.cleanup?.();
      }
    });
  });
}

/**
 * The plugin as the runtime sees it, but every message its `ctx.receive` accepted is pushed to
 * `received` (the runtime keeps overheard group messages in memory only, with nothing to read back).
 */
function withReceiveTap(plugin: ChannelPlugin, received: InboundMessage[]): ChannelPlugin {
  const tap = (ctx: ChannelContext): ChannelContext =>
    new Proxy(ctx, {
      get(target, name, receiver) {
        if (name !== 'receive') return Reflect.get(target, name, receiver);
        return async (message: InboundMessage) => {
          await target.receive(message);
          received.push(message);
        };
      },
    });
  return new Proxy(plugin, {
    get(target, name) {
      const value = Reflect.get(target, name, target);
      if (name === 'start') return (ctx: ChannelContext) => target.start(tap(ctx));
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

function textOf(message: ModelMessage): string {
  const { content } = message;
  if (typeof content === 'string') return content;
  return content.map((block) => (block.type === 'text' ? block.text : '')).join('\n');
}

async function waitFor(
  done: () => boolean | Promise<boolean>,
  timeoutMs: number,
  what: string,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error(`conformance: ${what} within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
