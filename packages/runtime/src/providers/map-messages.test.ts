import { jsonSchema } from 'ai';
import { describe, expect, it } from 'vitest';
import { MISSING_TOOL_RESULT, toAiSdkMessages, toAiSdkTools } from './map-messages.js';

describe('toAiSdkMessages', () => {
  it('keeps plain user and assistant strings as they are', async () => {
    expect(
      toAiSdkMessages([
        { role: 'user', content: 'hi' },
        { role: 'assistant', content: 'hello' },
      ]),
    ).toEqual([
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: 'hello' },
    ]);
  });

  it('turns tool calls into tool-call parts and merges consecutive results into one tool message', async () => {
    const out = toAiSdkMessages([
      {
        role: 'assistant',
        content: [
          { type: 'toolCall', id: 'a', name: 'one', arguments: { x: 1 } },
          { type: 'toolCall', id: 'b', name: 'two', arguments: { y: 2 } },
        ],
      },
      { role: 'toolResult', toolCallId: 'a', toolName: 'one', content: 'ok' },
      { role: 'toolResult', toolCallId: 'b', toolName: 'two', content: 'bad', isError: true },
    ]);
    expect(out).toEqual([
      {
        role: 'assistant',
        content: [
          { type: 'tool-call', toolCallId: 'a', toolName: 'one', input: { x: 1 } },
          { type: 'tool-call', toolCallId: 'b', toolName: 'two', input: { y: 2 } },
        ],
      },
      {
        role: 'tool',
        content: [
          { type: 'tool-result', toolCallId: 'a', toolName: 'one', output: { type: 'text', value: 'ok' } },
          {
            type: 'tool-result',
            toolCallId: 'b',
            toolName: 'two',
            output: { type: 'error-text', value: 'bad' },
          },
        ],
      },
    ]);
  });

  it('gives a tool call without a result an error result before the next message', async () => {
    const out = toAiSdkMessages([
      { role: 'assistant', content: [{ type: 'toolCall', id: 'lost', name: 'slow', arguments: {} }] },
      { role: 'user', content: 'are you there?' },
    ]);
    expect(out[1]).toEqual({
      role: 'tool',
      content: [
        {
          type: 'tool-result',
          toolCallId: 'lost',
          toolName: 'slow',
          output: { type: 'error-text', value: MISSING_TOOL_RESULT },
        },
      ],
    });
    expect(out[2]).toEqual({ role: 'user', content: 'are you there?' });
  });

  it('closes a dangling tool call at the end of the history too', async () => {
    const out = toAiSdkMessages([
      { role: 'assistant', content: [{ type: 'toolCall', id: 'x', name: 't', arguments: {} }] },
    ]);
    expect(out.at(-1)?.role).toBe('tool');
  });

  it('drops a tool result whose call is not in the history', async () => {
    expect(
      toAiSdkMessages([
        { role: 'user', content: 'hi' },
        { role: 'toolResult', toolCallId: 'ghost', toolName: 't', content: 'x' },
      ]),
    ).toEqual([{ role: 'user', content: 'hi' }]);
  });

  it('leaves out empty assistant messages and drops thinking unless asked to keep signed thinking', async () => {
    const history = [
      { role: 'assistant' as const, content: '' },
      {
        role: 'assistant' as const,
        content: [
          { type: 'thinking' as const, thinking: 'hmm', thinkingSignature: 's' },
          { type: 'thinking' as const, thinking: 'unsigned' },
          { type: 'text' as const, text: 'answer' },
        ],
      },
    ];
    expect(toAiSdkMessages(history)).toEqual([
      { role: 'assistant', content: [{ type: 'text', text: 'answer' }] },
    ]);
    expect(toAiSdkMessages(history, { keepSignedThinking: true })).toEqual([
      {
        role: 'assistant',
        content: [
          { type: 'reasoning', text: 'hmm', providerOptions: { anthropic: { signature: 's' } } },
          { type: 'text', text: 'answer' },
        ],
      },
    ]);
  });

  it('sends image data as file parts and omitted images as a text note', async () => {
    expect(
      toAiSdkMessages([
        {
          role: 'user',
          content: [
            { type: 'text', text: 'look' },
            { type: 'image', mimeType: 'image/png', data: 'iVBORw0KGgo=' },
            { type: 'image', mimeType: 'image/png', omitted: true, bytes: 2048 },
          ],
        },
      ]),
    ).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'look' },
          { type: 'file', data: 'iVBORw0KGgo=', mediaType: 'image/png' },
          { type: 'text', text: '[image omitted, 2048 bytes]' },
        ],
      },
    ]);
  });
});

describe('toAiSdkTools', () => {
  it('wraps parameters with jsonSchema, without execute, and strips symbol keys', async () => {
    const kind = Symbol.for('TypeBox.Kind');
    const tools = toAiSdkTools(
      [
        {
          name: 'echo',
          description: 'Echoes.',
          parameters: { type: 'object', [kind]: 'Object', properties: {} },
        },
      ],
      { jsonSchema },
    );
    const echo = tools.echo;
    if (!echo) throw new Error('no echo tool');
    expect(echo.description).toBe('Echoes.');
    expect('execute' in echo && echo.execute).toBeFalsy();
    const schema = await (echo.inputSchema as { jsonSchema: object }).jsonSchema;
    expect(schema).toEqual({ type: 'object', properties: {} });
    expect(Object.getOwnPropertySymbols(schema)).toEqual([]);
  });
});
