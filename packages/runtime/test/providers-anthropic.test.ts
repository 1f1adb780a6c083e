import { isColloquyError } from '@colloquy/core';
import type { ModelRequest, ModelStreamEvent } from '@colloquy/core/model';
import { fakeReply, type OpenAIFake, startOpenAIFake } from '@colloquy/testkit/openai-fake';
import { afterEach, describe, expect, it } from 'vitest';
import { createModelProvider } from '../src/providers/create-model-provider.js';

let server: OpenAIFake | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const request = (overrides: Partial<ModelRequest> = {}): ModelRequest => ({
  model: 'claude/claude-test',
  system: 'Be brief.',
  messages: [{ role: 'user', content: 'Hi' }],
  tools: [],
  ...overrides,
});

async function collect(events: AsyncIterable<ModelStreamEvent>): Promise<ModelStreamEvent[]> {
  const out: ModelStreamEvent[] = [];
  for await (const event of events) out.push(event);
  return out;
}

describe('anthropic provider', () => {
  it('streams text and usage from the messages API with the key in x-api-key', async () => {
    server = await startOpenAIFake([
      fakeReply.text(['Hi ', 'there'], { usage: { promptTokens: 9, completionTokens: 2 } }),
    ]);
    const provider = createModelProvider('claude', {
      kind: 'anthropic',
      baseURL: server.baseURL,
      apiKey: 'sk-ant-test',
    });
    const events = await collect(provider.streamTurn(request()));
    expect(events).toEqual([
      { type: 'text-delta', text: 'Hi ' },
      { type: 'text-delta', text: 'there' },
      {
        type: 'finish',
        finishReason: 'stop',
        usage: { inputTokens: 9, outputTokens: 2, totalTokens: 11, contextTokens: 9 },
      },
    ]);
    const [sent] = server.requests;
    expect(sent?.path).toBe('/v1/messages');
    expect(sent?.headers['x-api-key']).toBe('sk-ant-test');
    expect(sent?.body).toMatchObject({
      model: 'claude-test',
      stream: true,
      system: [{ type: 'text', text: 'Be brief.' }],
    });
  });

  it('yields tool calls and sends tool results back as tool_result blocks', async () => {
    server = await startOpenAIFake([
      { toolCalls: [{ id: 'toolu_1', name: 'session_status', arguments: { sessionKey: 'main' } }] },
    ]);
    const provider = createModelProvider(
      'claude',
      { kind: 'anthropic', baseURL: server.baseURL, apiKeyEnv: 'CLAUDE_KEY' },
      { env: { CLAUDE_KEY: 'k' } },
    );
    const events = await collect(
      provider.streamTurn(
        request({
          tools: [
            {
              name: 'session_status',
              description: 'Status.',
              parameters: { type: 'object', properties: { sessionKey: { type: 'string' } } },
            },
          ],
          messages: [
            { role: 'user', content: 'status?' },
            {
              role: 'assistant',
              content: [
                { type: 'thinking', thinking: 'I should check.', thinkingSignature: 'sig-1' },
                { type: 'toolCall', id: 'toolu_0', name: 'session_status', arguments: {} },
              ],
            },
            {
              role: 'toolResult',
              toolCallId: 'toolu_0',
              toolName: 'session_status',
              content: 'busy',
              isError: true,
            },
          ],
        }),
      ),
    );
    expect(events[0]).toEqual({
      type: 'tool-call',
      id: 'toolu_1',
      name: 'session_status',
      arguments: { sessionKey: 'main' },
    });
    expect(events.at(-1)).toMatchObject({ type: 'finish', finishReason: 'tool-calls' });
    const body = server.requests[0]?.body;
    expect(body.tools[0]).toMatchObject({ name: 'session_status', input_schema: { type: 'object' } });
    expect(body.messages[1]).toEqual({
      role: 'assistant',
      content: [
        { type: 'thinking', thinking: 'I should check.', signature: 'sig-1' },
        { type: 'tool_use', id: 'toolu_0', name: 'session_status', input: {} },
      ],
    });
    expect(body.messages[2]).toEqual({
      role: 'user',
      content: [{ type: 'tool_result', tool_use_id: 'toolu_0', content: 'busy', is_error: true }],
    });
  });

  it('maps an Anthropic 429 to RATE_LIMITED', async () => {
    server = await startOpenAIFake([fakeReply.rateLimited(120)]);
    const provider = createModelProvider('claude', {
      kind: 'anthropic',
      baseURL: server.baseURL,
      apiKey: 'k',
    });
    let caught: unknown;
    try {
      await collect(provider.streamTurn(request()));
    } catch (error) {
      caught = error;
    }
    expect(isColloquyError(caught) && caught.code).toBe('RATE_LIMITED');
    expect(isColloquyError(caught) && caught.details.retryAfterMs).toBe(120_000);
  });
});
