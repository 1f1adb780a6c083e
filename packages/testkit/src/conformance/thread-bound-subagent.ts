import { resolveConfig } from '@colloquy/core';
import type { ModelRequest } from '@colloquy/core/model';
import { MemoryStore } from '@colloquy/core/store';
import { createRuntime } from '@colloquy/runtime';
import { describe, expect, it } from 'vitest';
import { createScriptedModel, makeSessionRecord } from '../index.js';
import type { ChannelConformanceFixture, ChannelConformanceOptions, PlatformSentMessage } from './fixture.js';

const CHILD_REPLY = 'conformance: the child answers in its thread';
const PARENT_REPLY = 'conformance: the parent reports the result';

/**
 * Registers the runtime-level thread case of the conformance suite: a parent session in the
 * fixture's `threadParent` chat spawns a sub-agent with `thread: true` (real runtime, scripted
 * model, the plugin under test). The child's first reply must land in the thread the plugin
 * created, and the parent's one message about the result in the parent chat, never in the thread;
 * the raw completion block reaches no chat. Skipped for plugins without threads.
 *
 * @param name - the suite title
 * @param setup - builds a fresh fixture
 * @param options - the agent id and inbound timeout
 */
export function runThreadBoundSubagentConformance(
  name: string,
  setup: () => ChannelConformanceFixture | Promise<ChannelConformanceFixture>,
  options: ChannelConformanceOptions = {},
): void {
  const agentId = options.agentId ?? 'main';
  const timeoutMs = Math.max(options.inboundTimeoutMs ?? 5000, 5000);

  describe(`channel plugin conformance: ${name}, thread-bound sub-agents (runtime)`, () => {
    it('answers in the child’s thread from its first run, and the parent answers the result in its chat', async (test) => {
      const fixture = await setup();
      try {
        if (!fixture.plugin.capabilities.threads || !fixture.threadParent) {
          test.skip('capabilities.threads is false');
          return;
        }
        const parent = fixture.threadParent;
        const isChild = (request: ModelRequest) => request.system.includes('You are a sub-agent');
        const model = createScriptedModel((request) => {
          if (isChild(request)) return CHILD_REPLY;
          const last = request.messages.at(-1);
          if (last?.role === 'toolResult') return 'spawned';
          const text = typeof last?.content === 'string' ? last.content : '';
          if (text.includes('Sub-agent')) return PARENT_REPLY;
          return {
            toolCalls: [
              {
                name: 'sessions_spawn',
                arguments: { task: 'look into it', label: 'Conformance', thread: true },
              },
            ],
          };
        });
        const store = new MemoryStore();
        const parentKey = `agent:${agentId}:${fixture.plugin.id}:${parent.chatType}:${parent.to.to}`;
        await store.putSession(
          makeSessionRecord(parentKey, {
            agentId,
            kind: 'group',
            chatType: parent.chatType,
            channel: fixture.plugin.id,
            deliveryContext: { ...parent.to },
          }),
        );
        const runtime = createRuntime({
          config: resolveConfig({ agents: { defaults: { model: 'scripted/conformance' } } }),
          store,
          plugins: [fixture.plugin],
          models: () => ({ provider: model, modelId: 'conformance' }),
          subagents: { pollMs: 20, retryBaseMs: 20 },
        });
        await runtime.start();
        try {
          await fixture.ready?.();
          await runtime.gateway.call('agent', { sessionKey: parentKey, message: 'please look into it' });
          const sent = await waitForSent(
            fixture,
            (all) => all.some((m) => m.text.includes(PARENT_REPLY)),
            timeoutMs,
          );
          const child = (await store.listSessions({ kinds: ['subagent'] }))[0];
          const threadId = child?.deliveryContext?.threadId;
          expect(threadId, 'the child is bound to a thread the plugin created').toBeDefined();
          const childReply = sent.find((m) => m.text.includes(CHILD_REPLY));
          expect(childReply, 'the child’s first reply reached the platform').toBeDefined();
          expect(childReply?.threadId ?? childReply?.chatId, 'the child’s reply went into its thread').toBe(
            threadId,
          );
          const parentReply = sent.find((m) => m.text.includes(PARENT_REPLY))!;
          expect(parentReply.threadId, 'the parent’s reply stayed in the parent chat').not.toBe(threadId);
          expect(parentReply.chatId).not.toBe(threadId);
          expect(
            sent.filter((m) => m.text.includes('Sub-agent')),
            'no raw completion block in a chat',
          ).toEqual([]);
        } finally {
          await runtime.shutdown({ drainMs: 500 });
        }
      } finally {
        await fixture.cleanup?.();
      }
    });
  });
}

async function waitForSent(
  fixture: ChannelConformanceFixture,
  done: (sent: readonly PlatformSentMessage[]) => boolean,
  timeoutMs: number,
): Promise<readonly PlatformSentMessage[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const sent = await fixture.readSent();
    if (done(sent)) return sent;
    if (Date.now() > deadline) {
      throw new Error(
        `conformance: the expected replies did not arrive within ${timeoutMs} ms; sent: ${JSON.stringify(sent)}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
