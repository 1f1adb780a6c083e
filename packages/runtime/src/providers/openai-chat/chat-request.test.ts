import { describe, expect, it } from 'vitest';
import { openAiChatBody, toOpenAiChatMessages } from './chat-request.js';

describe('toOpenAiChatMessages', () => {
  it('sends a one-text user message as a string and images as data URLs or links', () => {
    expect(
      toOpenAiChatMessages([
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: [{ type: 'text', text: 'hi' }] },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'look' },
            { type: 'file', data: { type: 'data', data: 'aGVsbG8=' }, mediaType: 'image/*' },
            {
              type: 'file',
              data: { type: 'data', data: new Uint8Array([104, 105]) },
              mediaType: 'image/png',
            },
            {
              type: 'file',
              data: { type: 'url', url: new URL('https://example.invalid/cat.png') },
              mediaType: 'image/png',
            },
          ],
        },
      ]),
    ).toEqual([
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'hi' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'look' },
          { type: 'image_url', image_url: { url: 'data:image/jpeg;base64,aGVsbG8=' } },
          { type: 'image_url', image_url: { url: 'data:image/png;base64,aGk=' } },
          { type: 'image_url', image_url: { url: 'https://example.invalid/cat.png' } },
        ],
      },
    ]);
  });

  it('sends tool calls with JSON arguments, reasoning apart, and one tool message per result', () => {
    expect(
      toOpenAiChatMessages([
        {
          role: 'assistant',
          content: [
            { type: 'reasoning', text: 'think' },
            { type: 'tool-call', toolCallId: 'c1', toolName: 'sessions_list', input: { limit: 2 } },
            { type: 'tool-call', toolCallId: 'c2', toolName: 'agents_list', input: undefined },
          ],
        },
        {
          role: 'tool',
          content: [
            {
              type: 'tool-result',
              toolCallId: 'c1',
              toolName: 'sessions_list',
              output: { type: 'text', value: '[]' },
            },
            {
              type: 'tool-result',
              toolCallId: 'c2',
              toolName: 'agents_list',
              output: { type: 'error-text', value: 'denied' },
            },
          ],
        },
        { role: 'assistant', content: [{ type: 'text', text: 'done' }] },
      ]),
    ).toEqual([
      {
        role: 'assistant',
        content: null,
        reasoning_content: 'think',
        tool_calls: [
          { id: 'c1', type: 'function', function: { name: 'sessions_list', arguments: '{"limit":2}' } },
          { id: 'c2', type: 'function', function: { name: 'agents_list', arguments: '{}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'c1', content: '[]' },
      { role: 'tool', tool_call_id: 'c2', content: 'denied' },
      { role: 'assistant', content: 'done' },
    ]);
  });
});

describe('openAiChatBody', () => {
  it('asks for a stream with usage and sends tools, limits and reasoning effort only when set', () => {
    const prompt = [{ role: 'user' as const, content: [{ type: 'text' as const, text: 'hi' }] }];
    expect(openAiChatBody({ modelId: 'm', prompt, tools: [] })).toEqual({
      model: 'm',
      messages: [{ role: 'user', content: 'hi' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    const parameters = { type: 'object', properties: {} };
    const body = openAiChatBody({
      modelId: 'm',
      prompt,
      tools: [{ name: 't', description: 'A tool.', parameters }],
      maxOutputTokens: 100,
      reasoningEffort: 'low',
    });
    expect(body).toMatchObject({
      max_tokens: 100,
      reasoning_effort: 'low',
      tools: [{ type: 'function', function: { name: 't', description: 'A tool.', parameters } }],
      tool_choice: 'auto',
    });
  });
});
