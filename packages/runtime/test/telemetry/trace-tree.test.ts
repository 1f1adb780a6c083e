import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  call,
  echoTool,
  isSubagent,
  MAIN,
  quiesce,
  type SubagentHarness,
  seedMain,
  startSubagentHarness,
} from '../subagents/subagents-fixture.js';
import { type Harness, startHarness, waitFor } from '../support/harness.js';
import { isChildOf, oneSpan, registerMemoryTelemetry, spansNamed } from '../support/telemetry.js';

const telemetry = registerMemoryTelemetry();

let h: Harness | SubagentHarness | undefined;
beforeEach(() => telemetry.reset());
afterEach(async () => {
  await h?.close();
  h = undefined;
});

/** Runs one direct message through the memory channel until its reply was sent. */
async function converse(harness: Harness, text: string): Promise<void> {
  await harness.channel.inject(text);
  await waitFor(() => harness.channel.sent.length > 0, 10_000, 'the reply');
  await waitFor(
    () => telemetry.spans().some((span) => span.name.startsWith('invoke_agent ')),
    10_000,
    'the turn span',
  );
}

describe('traces of a turn', () => {
  it('traces a turn with a tool call: inbound, invoke_agent, a chat span per model step, execute_tool, deliver', async () => {
    h = await startHarness({
      script: [
        {
          toolCalls: [{ name: 'echo', arguments: { text: 'ping' } }],
          usage: { inputTokens: 11, outputTokens: 3 },
        },
        'pong',
      ],
      tools: () => [echoTool],
    });
    await converse(h, 'say pong');
    const spans = telemetry.spans();
    const inbound = oneSpan(spans, 'colloquy.inbound memory');
    const turn = oneSpan(spans, 'invoke_agent main');
    const chats = spansNamed(spans, 'chat test');
    const tool = oneSpan(spans, 'execute_tool echo');
    const deliver = oneSpan(spans, 'colloquy.deliver memory');

    expect(isChildOf(turn, inbound)).toBe(true);
    expect(chats).toHaveLength(2);
    for (const chat of chats) {
      expect(isChildOf(chat, turn)).toBe(true);
      expect(chat.kind).toBe(SpanKind.CLIENT);
    }
    expect(isChildOf(tool, turn)).toBe(true);
    expect(isChildOf(deliver, turn)).toBe(true);
    // The tool ran between the two model steps.
    // Compared as numbers (`>=` on two [seconds, nanoseconds] arrays compares their text), within the
    // millisecond: the SDK takes a span's start from Date.now(), in whole milliseconds, and its end
    // from the start plus a performance.now() duration, so a tool started in the millisecond its
    // model step ended can read as starting before that end.
    expect(nanosOf(tool.startTime) + 1_000_000n).toBeGreaterThanOrEqual(nanosOf(chats[0]!.endTime));

    const session = (await h.store.listSessions({}))[0]!;
    expect(turn.attributes).toMatchObject({
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.agent.name': 'main',
      'gen_ai.conversation.id': session.key,
      'colloquy.run.status': 'done',
      'colloquy.tree.id': turn.spanContext().traceId,
    });
    expect(chats[0]!.attributes).toMatchObject({
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': 'scripted',
      'gen_ai.request.model': 'test',
      'gen_ai.usage.input_tokens': 11,
      'gen_ai.usage.output_tokens': 3,
      'gen_ai.response.finish_reasons': ['tool-calls'],
    });
    expect(tool.attributes).toMatchObject({
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': 'echo',
      'gen_ai.tool.type': 'function',
    });
    expect(deliver.attributes).toMatchObject({
      'colloquy.delivery.kind': 'reply',
      'colloquy.delivery.status': 'delivered',
    });
  });

  it('records no message content by default', async () => {
    h = await startHarness({ script: ['the secret answer'] });
    await converse(h, 'tell me the secret question');
    for (const span of telemetry.spans()) {
      const values = JSON.stringify(span.attributes);
      expect(values).not.toContain('secret');
      expect(
        Object.keys(span.attributes).filter((key) => key.includes('messages') || key.includes('call.')),
      ).toEqual(span.name.startsWith('execute_tool') ? ['gen_ai.tool.call.id'] : []);
    }
  });

  it('records content when asked, redacted as history output is', async () => {
    const key = 'sk-ant-abcdefghijklmnopqrstuvwx0123';
    h = await startHarness({
      script: [{ toolCalls: [{ name: 'echo', arguments: { text: `use ${key}` } }] }, `done with ${key}`],
      tools: () => [echoTool],
      config: { redaction: { secrets: ['hunter2-password'] } },
      telemetry: { recordContent: true },
    });
    await converse(h, 'my password is hunter2-password');
    const spans = telemetry.spans();
    const chats = spansNamed(spans, 'chat test');
    const input = String(chats[0]!.attributes['gen_ai.input.messages']);
    expect(input).toContain('my password is');
    expect(input).not.toContain('hunter2-password');
    expect(input).toContain('[REDACTED]');
    const output = String(chats[1]!.attributes['gen_ai.output.messages']);
    expect(output).toContain('done with');
    expect(output).not.toContain(key);
    const tool = oneSpan(spans, 'execute_tool echo');
    expect(String(tool.attributes['gen_ai.tool.call.arguments'])).not.toContain(key);
    expect(String(tool.attributes['gen_ai.tool.call.result'])).not.toContain(key);
    expect(String(tool.attributes['gen_ai.tool.call.result'])).toContain('echoed');
  });

  it('marks a failed model call and its turn with error.type', async () => {
    h = await startHarness({ script: [{ error: { code: 'RATE_LIMITED', message: 'slow down' } }] });
    await converse(h, 'hello');
    const spans = telemetry.spans();
    const chat = oneSpan(spans, 'chat test');
    expect(chat.status.code).toBe(SpanStatusCode.ERROR);
    expect(chat.attributes['error.type']).toBe('RATE_LIMITED');
    const turn = oneSpan(spans, 'invoke_agent main');
    expect(turn.status.code).toBe(SpanStatusCode.ERROR);
    expect(turn.attributes['error.type']).toBe('error');
  });

  it('records turn, model, token, queue-wait and tool metrics', async () => {
    h = await startHarness({
      script: [
        {
          toolCalls: [{ name: 'echo', arguments: { text: 'x' } }],
          usage: { inputTokens: 20, outputTokens: 5 },
        },
        'ok',
      ],
      tools: () => [echoTool],
    });
    await converse(h, 'go');
    const tokens = await telemetry.collect('gen_ai.client.token.usage');
    const input = tokens.find((p) => p.attributes['gen_ai.token.type'] === 'input');
    expect(input).toBeDefined();
    expect(input!.attributes).toMatchObject({
      'gen_ai.provider.name': 'scripted',
      'gen_ai.request.model': 'test',
    });
    expect((input!.value as { sum: number }).sum).toBeGreaterThanOrEqual(20);
    for (const name of [
      'gen_ai.client.operation.duration',
      'gen_ai.client.operation.time_to_first_chunk',
      'gen_ai.invoke_agent.duration',
      'gen_ai.execute_tool.duration',
      'colloquy.run.queue_wait',
    ]) {
      const points = await telemetry.collect(name);
      expect(points.length, name).toBeGreaterThan(0);
      expect((points[0]!.value as { count: number }).count, name).toBeGreaterThan(0);
    }
    const active = await telemetry.collect('colloquy.runs.active');
    expect(active.map((p) => p.attributes['colloquy.lane']).sort()).toEqual(['cron', 'main', 'subagent']);
    expect(await telemetry.collect('colloquy.announces.pending')).toEqual([{ attributes: {}, value: 0 }]);
  });
});

describe('one trace per spawn tree', () => {
  it("continues a gateway client's traceparent: the turn is a child of the caller's span", async () => {
    h = await startHarness({ script: ['hi back'] });
    const traceparent = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
    await h.runtime.gateway.call('agent', {
      sessionKey: 'main',
      message: 'hi',
      traceparent,
      tracestate: 'vendor=1',
    });
    await waitFor(() => spansNamed(telemetry.spans(), 'invoke_agent ').length === 1, 10_000, 'the turn span');
    const turn = oneSpan(telemetry.spans(), 'invoke_agent main');
    expect(turn.spanContext().traceId).toBe('4bf92f3577b34da6a3ce929d0e0e4736');
    expect(turn.parentSpanContext).toMatchObject({ spanId: '00f067aa0ba902b7', isRemote: true });
    expect(turn.parentSpanContext?.traceState?.get('vendor')).toBe('1');
    expect(turn.attributes['colloquy.tree.id']).toBe('4bf92f3577b34da6a3ce929d0e0e4736');
  });

  it("runs a sub-agent in its parent's trace under the spawning tool call, and links its announce to it", async () => {
    h = await startSubagentHarness({
      script: (request) => {
        if (isSubagent(request)) return 'child result';
        const spawned = request.messages.some((m) => m.role === 'toolResult');
        if (spawned) return 'waiting for the helper';
        if (request.messages.some((m) => typeof m.content === 'string' && m.content.includes('finished')))
          return 'the helper is done';
        return { toolCalls: [{ name: 'sessions_spawn', arguments: { task: 'help', label: 'helper' } }] };
      },
    });
    await seedMain(h.store);
    await h.runtime.gateway.call('agent', { sessionKey: MAIN, message: 'start a helper' });
    await waitFor(
      async () => (await h!.store.listOutbox({ statuses: ['delivered'] })).length === 1,
      4000,
      'the announce',
    );
    await quiesce(h as SubagentHarness);
    const spans = telemetry.spans();
    const spawn = oneSpan(spans, 'execute_tool sessions_spawn');
    const turns = spansNamed(spans, 'invoke_agent ');
    const parentTurn = turns.find((span) => span.attributes['gen_ai.conversation.id'] === MAIN)!;
    const childTurn = turns.find((span) =>
      String(span.attributes['gen_ai.conversation.id']).includes(':subagent:'),
    )!;
    expect(childTurn).toBeDefined();
    expect(isChildOf(spawn, parentTurn)).toBe(true);
    expect(isChildOf(childTurn, spawn)).toBe(true);
    expect(childTurn.attributes['colloquy.lane']).toBe('subagent');
    expect(childTurn.attributes['colloquy.tree.id']).toBe(parentTurn.spanContext().traceId);

    const announce = oneSpan(spans, 'colloquy.announce');
    expect(announce.spanContext().traceId).toBe(parentTurn.spanContext().traceId);
    expect(isChildOf(announce, spawn)).toBe(true);
    expect(announce.links.map((link) => link.context.spanId)).toEqual([childTurn.spanContext().spanId]);
    expect(announce.attributes).toMatchObject({
      'colloquy.announce.status': 'ok',
      'gen_ai.conversation.id': MAIN,
    });
  });

  it('gives each run a trace of its own, linked and sharing the tree id, when traceTree is "run"', async () => {
    h = await startSubagentHarness({
      // The parent spawns through the tool directly below; woken by the announce, it only answers.
      script: (request) => (isSubagent(request) ? 'child result' : 'noted'),
      telemetry: { traceTree: 'run' },
    });
    await seedMain(h.store);
    const spawned = await call<{ runId: string; childSessionKey: string }>(
      (await (h as SubagentHarness).tools(MAIN)).sessions_spawn,
      {
        task: 'help',
      },
    );
    await waitFor(
      async () => (await h!.store.getOutbox(spawned.childSessionKey, spawned.runId))?.status === 'delivered',
      10_000,
      'the announce',
    );
    await waitFor(() => spansNamed(telemetry.spans(), 'colloquy.announce').length === 1, 10_000, 'its span');
    const spans = telemetry.spans();
    const childTurn = spansNamed(spans, 'invoke_agent ').find((span) =>
      String(span.attributes['gen_ai.conversation.id']).includes(':subagent:'),
    )!;
    // Spawned outside any span (a direct tool call): the child starts the tree.
    expect(childTurn.parentSpanContext).toBeUndefined();
    const announce = oneSpan(spans, 'colloquy.announce');
    expect(announce.spanContext().traceId).not.toBe(childTurn.spanContext().traceId);
    expect(announce.links[0]?.context.spanId).toBe(childTurn.spanContext().spanId);
    expect(announce.attributes['colloquy.tree.id']).toBe(childTurn.attributes['colloquy.tree.id']);
  });
});

/** An OpenTelemetry `[seconds, nanoseconds]` time as one number of nanoseconds. */
function nanosOf([seconds, nanos]: readonly [number, number]): bigint {
  return BigInt(seconds) * 1_000_000_000n + BigInt(nanos);
}
