import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { APICallError, JSONParseError } from '@ai-sdk/provider';
import { afterEach, describe, expect, it } from 'vitest';
import type { DirectPart } from '../model-stream.js';
import { type OpenAiChatEndpoint, streamOpenAiChat } from './chat-stream.js';

let server: Server | undefined;
afterEach(async () => {
  await new Promise((resolve) => server?.close(resolve) ?? resolve(undefined));
  server = undefined;
});

/** A server that answers every request with `status` and the given body pieces, flushed one by one. */
async function serve(status: number, pieces: readonly string[], headers: Record<string, string> = {}) {
  server = createServer(async (req, res) => {
    for await (const _ of req);
    res.writeHead(status, { 'content-type': 'text/event-stream', ...headers });
    for (const piece of pieces) {
      res.write(piece);
      await new Promise((resolve) => setImmediate(resolve));
    }
    res.end();
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: new URL(`http://127.0.0.1:${port}/v1/chat/completions`), headers: {} };
}

const body = {
  model: 'm',
  messages: [{ role: 'user' as const, content: 'hi' }],
  stream: true as const,
  stream_options: { include_usage: true as const },
};

async function parts(endpoint: OpenAiChatEndpoint): Promise<DirectPart[]> {
  const out: DirectPart[] = [];
  for await (const part of streamOpenAiChat(endpoint, body, new AbortController().signal)) out.push(part);
  return out;
}

const event = (chunk: unknown) => `data: ${JSON.stringify(chunk)}\n\n`;

describe('streamOpenAiChat', () => {
  it('assembles tool calls from argument pieces, in index order, after the text', async () => {
    const endpoint = await serve(200, [
      event({ choices: [{ delta: { content: 'Let me look.' } }] }),
      event({
        choices: [
          { delta: { tool_calls: [{ index: 1, id: 'c2', function: { name: 'b', arguments: '{"x"' } }] } },
        ],
      }),
      event({
        choices: [
          { delta: { tool_calls: [{ index: 0, id: 'c1', function: { name: 'a', arguments: '' } }] } },
        ],
      }),
      event({ choices: [{ delta: { tool_calls: [{ index: 1, function: { arguments: ':1}' } }] } }] }),
      event({ choices: [{ delta: {}, finish_reason: 'tool_calls' }] }),
      event({ choices: [], usage: { prompt_tokens: 7, completion_tokens: 3 } }),
      'data: [DONE]\n\n',
    ]);
    expect(await parts(endpoint)).toEqual([
      { type: 'text-delta', text: 'Let me look.' },
      { type: 'tool-call', id: 'c1', name: 'a', arguments: {} },
      { type: 'tool-call', id: 'c2', name: 'b', arguments: { x: 1 } },
      {
        type: 'finish',
        finishReason: 'tool-calls',
        usage: { inputTokens: 7, outputTokens: 3, totalTokens: 10, contextTokens: 7 },
      },
    ]);
  });

  it('yields no finish for a stream that ended before the model finished', async () => {
    const endpoint = await serve(200, [event({ choices: [{ delta: { content: 'Half' } }] })]);
    expect(await parts(endpoint)).toEqual([{ type: 'text-delta', text: 'Half' }]);
  });

  it('throws the error a server sends in the stream, and JSONParseError for a malformed event', async () => {
    const failing = await serve(200, [event({ error: { message: 'overloaded' } })]);
    await expect(parts(failing)).rejects.toThrow('the server sent an error in the stream: overloaded');
    await new Promise((resolve) => server!.close(resolve));
    const malformed = await serve(200, ['data: {"choices": [\n\n']);
    await expect(parts(malformed)).rejects.toSatisfy((error) => JSONParseError.isInstance(error));
  });

  it('throws an APICallError with the status, headers and body of an error response', async () => {
    const endpoint = await serve(429, ['{"error":{"message":"slow down"}}'], { 'retry-after': '3' });
    const error = await parts(endpoint).catch((thrown: unknown) => thrown);
    expect(APICallError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({
      statusCode: 429,
      isRetryable: true,
      responseBody: '{"error":{"message":"slow down"}}',
      responseHeaders: expect.objectContaining({ 'retry-after': '3' }),
      data: { error: { message: 'slow down' } },
    });
  });

  it('reads events however the body is split, with CRLF or CR line ends, comments and other fields', async () => {
    const text = (content: string) => JSON.stringify({ choices: [{ delta: { content } }] });
    const body = `: keep-alive\r\n\r\nevent: x\r\nid: 1\r\ndata: ${text('a')}\r\n\r\ndata:${text('b')}\r\rdata: ${text('c')}\n\ndata: [DONE]\n\n`;
    const pieces = body.match(/[\s\S]{1,7}/g) ?? [];
    const endpoint = await serve(200, pieces);
    expect((await parts(endpoint)).filter((part) => part.type === 'text-delta')).toEqual([
      { type: 'text-delta', text: 'a' },
      { type: 'text-delta', text: 'b' },
      { type: 'text-delta', text: 'c' },
    ]);
  });

  it('keeps an event the end of the body cut off', async () => {
    const last = event({ choices: [{ delta: { content: 'done' }, finish_reason: 'stop' }] }).trimEnd();
    const endpoint = await serve(200, [last]);
    expect(await parts(endpoint)).toEqual([
      { type: 'text-delta', text: 'done' },
      {
        type: 'finish',
        finishReason: 'stop',
        usage: { inputTokens: 0, outputTokens: 0, totalTokens: 0, contextTokens: 0 },
      },
    ]);
  });

  it("sends the request through the endpoint's fetch when it has one", async () => {
    const endpoint = await serve(200, [
      event({ choices: [{ delta: { content: 'hi' }, finish_reason: 'stop' }] }),
    ]);
    const sent: string[] = [];
    const viaFetch: typeof fetch = (input, init) => {
      sent.push(String(input));
      return fetch(input, init);
    };
    expect(await parts({ ...endpoint, fetch: viaFetch })).toContainEqual({ type: 'text-delta', text: 'hi' });
    expect(sent).toEqual([endpoint.url.toString()]);
  });
});
