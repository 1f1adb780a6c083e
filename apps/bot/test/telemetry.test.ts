// The running app exports OpenTelemetry traces and metrics over OTLP/HTTP to a receiver on loopback
// (test/support/otlp-receiver.ts), when the standard environment asks for it.
import { FAKE_MCP_STDIO_SERVER } from '@colloquy/testkit/mcp-fake';
import { fakeReply, type OpenAIFake, startOpenAIFake } from '@colloquy/testkit/openai-fake';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AppProcess, runCliProcess, startApp } from './support/app-process.js';
import { attribute, type OtlpReceiver, startOtlpReceiver } from './support/otlp-receiver.js';

let receiver: OtlpReceiver;
let fake: OpenAIFake;
let app: AppProcess | undefined;

beforeAll(async () => {
  receiver = await startOtlpReceiver();
  fake = await startOpenAIFake([
    fakeReply.toolCall('local__echo', { text: 'traced' }),
    fakeReply.text('echoed'),
  ]);
});

afterAll(async () => {
  await app?.cleanup();
  await fake?.close();
  await receiver?.close();
});

describe('OpenTelemetry export from the running app', { timeout: 90_000 }, () => {
  it('sends the spans of a turn with an MCP tool call, and its metrics, to OTEL_EXPORTER_OTLP_ENDPOINT', async () => {
    app = await startApp(
      {
        mcp: { servers: { local: { command: process.execPath, args: [FAKE_MCP_STDIO_SERVER] } } },
        agents: { list: [{ id: 'main', default: true, tools: { allow: ['local__*'] } }] },
        telemetry: { metricIntervalSeconds: 1 },
      },
      {
        COLLOQUY_MODEL: 'fake/test-model',
        OPENAI_BASE_URL: fake.baseURL,
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
        OTEL_SERVICE_NAME: 'colloquy-under-test',
      },
    );
    expect(app.output()).toContain('exporting OpenTelemetry traces and metrics');
    const send = await runCliProcess(
      ['sessions', 'send', 'main', 'echo', 'something', '--state-dir', 'state'],
      {
        cwd: app.dir,
      },
    );
    expect(send.code).toBe(0);
    expect(send.stdout.trim()).toBe('echoed');
    // Metrics every second; spans in batches (flushed at the latest by the shutdown).
    await expect
      .poll(() => receiver.exports.some((e) => e.path === '/v1/metrics'), { timeout: 15_000, interval: 200 })
      .toBe(true);
    expect(await app.stop()).toBe(0);

    const traces = receiver.exports.filter((e) => e.path === '/v1/traces');
    expect(traces.length).toBeGreaterThan(0);
    expect(traces[0]!.contentType).toContain('application/json');
    const spans = receiver.spans();
    const turn = spans.find((span) => span.name === 'invoke_agent main');
    const chats = spans.filter((span) => span.name === 'chat test-model');
    const tool = spans.find((span) => span.name === 'execute_tool local__echo');
    expect(turn).toBeDefined();
    expect(chats).toHaveLength(2);
    expect(tool).toBeDefined();
    for (const span of [...chats, tool!]) {
      expect(span.traceId).toBe(turn!.traceId);
      expect(span.parentSpanId).toBe(turn!.spanId);
    }
    expect(attribute(turn!.attributes, 'gen_ai.conversation.id')).toBe('agent:main:main');
    expect(attribute(tool!.attributes, 'gen_ai.tool.type')).toBe('extension');
    expect(turn!.scope.name).toBe('@colloquy/runtime');
    expect(attribute(turn!.resource.attributes, 'service.name')).toBe('colloquy-under-test');
    // No content unless telemetry.recordContent: the tool's arguments never left the process.
    expect(JSON.stringify(traces.map((e) => e.body))).not.toContain('traced');

    const metricNames = new Set(
      receiver.exports
        .filter((e) => e.path === '/v1/metrics')
        .flatMap((e) => e.body.resourceMetrics ?? [])
        .flatMap((r) => r.scopeMetrics.filter((s) => s.scope.name === '@colloquy/runtime'))
        .flatMap((s) => s.metrics.map((m) => m.name)),
    );
    for (const name of [
      'gen_ai.invoke_agent.duration',
      'gen_ai.client.operation.duration',
      'gen_ai.client.token.usage',
      'gen_ai.execute_tool.duration',
      'colloquy.mcp.calls',
      'colloquy.runs.active',
    ]) {
      expect(metricNames, name).toContain(name);
    }
  });
});
