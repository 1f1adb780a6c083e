import { type AgentTool, toolResult } from '@colloquy/core';
import { lastUserText, messageText } from '@colloquy/testkit';
import { Type } from '@sinclair/typebox';
import { afterEach, describe, expect, it } from 'vitest';
import type { ToolsHookContext } from '../src/index.js';
import { type Harness, startHarness, waitFor } from './support/harness.js';

const MAIN = 'agent:main:main';

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

const echoTool: AgentTool = {
  name: 'echo',
  description: 'Echoes its text.',
  parameters: Type.Object({ text: Type.String(), times: Type.Optional(Type.Integer({ minimum: 1 })) }),
  execute: async (_id, args) => toolResult({ status: 'ok', echoed: (args as { text: string }).text }),
};

async function ask(h: Harness, message: string, extra: Record<string, unknown> = {}) {
  const { runId } = await h.runtime.gateway.call('agent', { sessionKey: 'main', message, ...extra });
  return h.runtime.gateway.call('agent.wait', { runId, timeoutMs: 5000 });
}

describe('agent loop', () => {
  it('answers a message, records the turn and accumulates usage and cost on the session', async () => {
    harness = await startHarness({
      script: [{ text: ['Hello', ' there'], usage: { inputTokens: 1000, outputTokens: 500 } }],
      config: { models: { prices: { 'scripted/test': { inputPerMTokUsd: 2, outputPerMTokUsd: 10 } } } },
    });
    const result = await ask(harness, 'hi');
    expect(result).toMatchObject({ status: 'done', waitTimedOut: false, reply: 'Hello there' });
    const history = await harness.store.readTail(MAIN, 10);
    expect(history.map((m) => [m.role, m.content])).toEqual([
      ['user', 'hi'],
      ['assistant', 'Hello there'],
    ]);
    expect(history[1]).toMatchObject({
      runId: result.runId,
      usage: { inputTokens: 1000, outputTokens: 500 },
    });
    const session = (await harness.store.getSession(MAIN))!;
    expect(session.usage).toMatchObject({
      inputTokens: 1000,
      outputTokens: 500,
      totalTokens: 1500,
      contextTokens: 1000,
    });
    expect(session.estimatedCostUsd).toBeCloseTo((1000 * 2 + 500 * 10) / 1e6, 12);
    expect(session.status).toBe('done');
    expect(await harness.store.getRun(result.runId)).toMatchObject({
      status: 'done',
      attempts: 1,
      costUsd: expect.any(Number),
    });
  });

  it('commits the run, the session row and the user message before the model is called', async () => {
    let seen: unknown;
    harness = await startHarness({
      script: async (request) => {
        const h = harness!;
        const [run] = await h.store.listRuns({ sessionKey: MAIN });
        seen = {
          run: { status: run?.status, attempts: run?.attempts },
          session: (await h.store.getSession(MAIN))?.status,
          last: (await h.store.readTail(MAIN, 1))[0]?.content,
          prompt: lastUserText(request),
        };
        return 'ok';
      },
    });
    await ask(harness, 'durable please');
    expect(seen).toEqual({
      run: { status: 'running', attempts: 1 },
      session: 'running',
      last: 'durable please',
      prompt: 'durable please',
    });
  });

  it('executes tool calls, records every call and result, and feeds results back to the model', async () => {
    const contexts: ToolsHookContext[] = [];
    harness = await startHarness({
      script: [
        { text: 'Let me echo.', toolCalls: [{ id: 'c1', name: 'echo', arguments: { text: 'ping' } }] },
        'Echoed.',
      ],
      tools: (ctx) => {
        contexts.push(ctx);
        return [echoTool];
      },
    });
    const result = await ask(harness, 'echo ping');
    expect(result.reply).toBe('Echoed.');
    expect(contexts[0]).toMatchObject({ session: { key: MAIN }, run: { runId: result.runId } });
    expect(contexts[0]!.gateway).toBe(harness.runtime.gateway);
    const [first, second] = harness.model.requests;
    expect(first!.tools.map((t) => t.name)).toEqual(['echo']);
    expect(second!.messages.at(-1)).toMatchObject({ role: 'toolResult', toolCallId: 'c1', toolName: 'echo' });
    const history = await harness.store.readTail(MAIN, 10);
    expect(history.map((m) => m.role)).toEqual(['user', 'assistant', 'toolResult', 'assistant']);
    expect(history[1]!.content).toEqual([
      { type: 'text', text: 'Let me echo.' },
      { type: 'toolCall', id: 'c1', name: 'echo', arguments: { text: 'ping' } },
    ]);
    expect(JSON.parse(history[2]!.content as string)).toEqual({ status: 'ok', echoed: 'ping' });
    expect(history.every((m) => m.runId === result.runId)).toBe(true);
  });

  it('answers invalid tool arguments with an error result naming the bad paths, and the run goes on', async () => {
    let called = false;
    const strict: AgentTool = {
      ...echoTool,
      execute: async () => {
        called = true;
        return toolResult({ status: 'ok' });
      },
    };
    harness = await startHarness({
      script: [{ toolCalls: [{ id: 'c1', name: 'echo', arguments: { text: 42, times: 0 } }] }, 'Sorry.'],
      tools: () => [strict],
    });
    const result = await ask(harness, 'go');
    expect(result.status).toBe('done');
    expect(called).toBe(false);
    const toolMessage = harness.model.requests[1]!.messages.at(-1)!;
    expect(toolMessage).toMatchObject({ role: 'toolResult', isError: true });
    const body = JSON.parse(messageText(toolMessage)) as { status: string; error: string };
    expect(body.status).toBe('error');
    expect(body.error).toContain('/text');
    expect(body.error).toContain('/times');
  });

  it('turns a throwing tool and an unknown tool into error results', async () => {
    const broken: AgentTool = {
      ...echoTool,
      name: 'broken',
      execute: async () => {
        throw new Error('disk on fire');
      },
    };
    harness = await startHarness({
      script: [
        {
          toolCalls: [
            { id: 'a', name: 'broken', arguments: { text: 'x' } },
            { id: 'b', name: 'nope', arguments: {} },
          ],
        },
        'Done anyway.',
      ],
      tools: () => [broken],
    });
    const result = await ask(harness, 'go');
    expect(result).toMatchObject({ status: 'done', reply: 'Done anyway.' });
    const results = (await harness.store.readTail(MAIN, 10)).filter((m) => m.role === 'toolResult');
    expect(results.map((m) => m.isError)).toEqual([true, true]);
    expect(results[0]!.content).toContain('disk on fire');
    expect(JSON.parse(results[1]!.content as string).error).toContain('Unknown tool "nope"');
  });

  it('stops at runtime.maxSteps and says how to raise the limit', async () => {
    harness = await startHarness({
      config: { runtime: { maxSteps: 2 } },
      script: () => ({ toolCalls: [{ name: 'echo', arguments: { text: 'again' } }] }),
      tools: () => [echoTool],
    });
    const result = await ask(harness, 'loop forever');
    expect(harness.model.callCount).toBe(2);
    expect(result.status).toBe('error');
    expect(result.error).toContain('runtime.maxSteps');
    const results = (await harness.store.readTail(MAIN, 20)).filter((m) => m.role === 'toolResult');
    expect(results).toHaveLength(2);
    expect(results[1]!.content).toContain('step limit');
  });

  it('ends the run with an error that tells the owner how to configure a model, and delivers it', async () => {
    harness = await startHarness({
      script: [],
      config: { agents: { defaults: { model: undefined } } },
      isOwner: () => true,
    });
    await harness.channel.inject('hello?');
    const key = 'agent:main:memory:dm:user-1';
    const [notice] = await harness.channel.waitForSent(1);
    expect(notice!.text).toContain('agents.defaults.model');
    const [run] = await harness.store.listRuns({ sessionKey: key });
    expect(run).toMatchObject({ status: 'error', error: expect.stringContaining('models.providers') });
    expect(harness.model.callCount).toBe(0);
  });

  it('folds messages that arrive during a run into the next turn, in order', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    harness = await startHarness({
      script: [
        async () => {
          await gate;
          return 'first answer';
        },
        'second answer',
      ],
    });
    await harness.channel.inject('one');
    await harness.model.waitForRequests(1);
    await harness.channel.inject('two');
    await harness.channel.inject('three');
    release();
    await harness.channel.waitForSent(2);
    expect(harness.model.callCount).toBe(2);
    const users = harness.model.requests[1]!.messages.filter((m) => m.role === 'user').map(messageText);
    expect(users).toEqual(['one', 'two', 'three']);
    const runs = await harness.store.listRuns({ sessionKey: 'agent:main:memory:dm:user-1' });
    expect(runs.map((r) => r.status)).toEqual(['done', 'done', 'done']);
    const folded = runs.filter((r) => r.message !== 'one');
    expect(folded.every((r) => r.reply === 'second answer')).toBe(true);
    expect(harness.channel.sent.map((m) => m.text)).toEqual(['first answer', 'second answer']);
  });

  it('abort stops the model call and marks the run killed', async () => {
    harness = await startHarness({ script: [{ text: 'never', delayMs: 60_000 }] });
    const { runId } = await harness.runtime.gateway.call('agent', { sessionKey: 'main', message: 'slow' });
    await harness.model.waitForRequests(1);
    // The model would take 60 s, beyond the test's timeout: the abort does not wait for it.
    const { aborted } = await harness.runtime.gateway.call('agent.abort', {
      runId,
      reason: 'changed my mind',
    });
    expect(aborted).toEqual([runId]);
    expect(await harness.store.getRun(runId)).toMatchObject({ status: 'killed', error: 'changed my mind' });
    expect(await harness.store.getSession(MAIN)).toMatchObject({ status: 'killed', abortedLastRun: true });
  });

  it('times a run out, marks it timeout and tells the user', async () => {
    harness = await startHarness({ script: [{ text: 'never', delayMs: 20_000 }] });
    await harness.channel.inject('slow');
    const key = 'agent:main:memory:dm:user-1';
    const [run] = await harness.store.listRuns({ sessionKey: key });
    // The inbound run has no timeout; give one through the gateway instead.
    await harness.runtime.gateway.call('agent.abort', { runId: run!.runId });
    harness.model.push({ text: 'never', delayMs: 20_000 });
    const { runId } = await harness.runtime.gateway.call('agent', {
      sessionKey: key,
      message: 'slow',
      timeoutSeconds: 0.05,
    });
    const result = await harness.runtime.gateway.call('agent.wait', { runId, timeoutMs: 5000 });
    expect(result.status).toBe('timeout');
    const [notice] = await harness.channel.waitForSent(1);
    expect(notice!.text).toContain('timed out');
  });

  it('appends and consumes the inbox before a turn, and wake starts a turn for an idle session', async () => {
    harness = await startHarness({ script: ['noted'] });
    await harness.runtime.gateway
      .call('agent', { sessionKey: 'main', message: 'seed' })
      .catch(() => undefined);
    harness.model.push('seeded');
    await waitFor(async () => (await harness!.store.getSession(MAIN))?.status === 'done');
    await harness.store.putInbox({
      sessionKey: MAIN,
      id: 'announce:child:r1',
      createdAt: Date.now(),
      message: {
        role: 'user',
        content: 'Sub-agent result: 42',
        timestamp: Date.now(),
        provenance: { kind: 'announce', sourceSessionKey: 'agent:main:subagent:child' },
      },
    });
    const runId = await harness.runtime.wake(MAIN);
    expect(runId).toBeDefined();
    expect(await harness.runtime.wake(MAIN)).toBeUndefined();
    const result = await harness.runtime.gateway.call('agent.wait', { runId: runId!, timeoutMs: 5000 });
    expect(result.status).toBe('done');
    const prompt = harness.model.lastRequest!;
    expect(messageText(prompt.messages.at(-1)!)).toContain('Sub-agent result: 42');
    expect(messageText(prompt.messages.at(-1)!)).toContain('not from the human user');
    expect(await harness.store.listInbox(MAIN)).toEqual([]);
    expect(await harness.runtime.wake(MAIN)).toBeUndefined();
  });

  it('builds the system prompt from the agent and the run, and keeps the history within the context budget', async () => {
    harness = await startHarness({
      config: {
        agents: { defaults: { systemPrompt: 'You are Colloquy.' } },
        models: { contextWindowTokens: 2000 },
      },
      script: () => 'ok',
    });
    await ask(harness, 'x'.repeat(8000));
    await ask(harness, 'short question', { extraSystemPrompt: 'Answer in French.' });
    const request = harness.model.lastRequest!;
    expect(request.system).toBe('You are Colloquy.\n\nAnswer in French.');
    const texts = request.messages.map(messageText);
    expect(texts.at(-1)).toBe('short question');
    expect(texts.some((t) => t.startsWith('xxxx'))).toBe(false);
  });
});
