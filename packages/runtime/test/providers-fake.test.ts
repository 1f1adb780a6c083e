import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { fakeReply, type OpenAIFake, startOpenAIFake } from '@colloquy/testkit/openai-fake';
import { generateText, jsonSchema } from 'ai';
import { afterEach, describe, expect, it } from 'vitest';

let server: OpenAIFake | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${server?.origin}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });

describe('the OpenAI-compatible fake', () => {
  it('answers non-streaming chat completions that the AI SDK understands, tool calls included', async () => {
    server = await startOpenAIFake([
      { text: 'calling', toolCalls: [{ id: 'c1', name: 'lookup', arguments: { q: 'x' } }] },
    ]);
    const sdk = createOpenAICompatible({ name: 'fake', baseURL: server.baseURL });
    const result = await generateText({
      model: sdk.chatModel('m'),
      prompt: 'hi',
      tools: {
        lookup: { inputSchema: jsonSchema({ type: 'object', properties: { q: { type: 'string' } } }) },
      },
    });
    expect(result.text).toBe('calling');
    expect(result.toolCalls.map((c) => [c.toolCallId, c.toolName, c.input])).toEqual([
      ['c1', 'lookup', { q: 'x' }],
    ]);
    expect(server.requests[0]?.stream).toBe(false);
  });

  it('answers non-streaming Anthropic messages', async () => {
    server = await startOpenAIFake([
      fakeReply.text('bonjour', { usage: { promptTokens: 4, completionTokens: 1 } }),
    ]);
    const response = await post('/v1/messages', { model: 'claude-x', messages: [], max_tokens: 10 });
    expect(await response.json()).toMatchObject({
      type: 'message',
      model: 'claude-x',
      content: [{ type: 'text', text: 'bonjour' }],
      stop_reason: 'end_turn',
      usage: { input_tokens: 4, output_tokens: 1 },
    });
  });

  it('answers 401 without the configured key and records the request', async () => {
    server = await startOpenAIFake([fakeReply.text('unused')], { apiKey: 'right' });
    const denied = await post(
      '/v1/chat/completions',
      { model: 'm', messages: [] },
      { authorization: 'Bearer wrong' },
    );
    expect(denied.status).toBe(401);
    expect(server.pending).toBe(1);
    const allowed = await post(
      '/v1/chat/completions',
      { model: 'm', messages: [] },
      { authorization: 'Bearer right' },
    );
    expect(allowed.status).toBe(200);
    expect(server.requests.map((r) => r.headers.authorization)).toEqual(['Bearer wrong', 'Bearer right']);
  });

  it('says so with a 500 when the script runs out', async () => {
    server = await startOpenAIFake([]);
    const response = await post('/v1/chat/completions', { model: 'm', messages: [] });
    expect(response.status).toBe(500);
    expect(JSON.stringify(await response.json())).toContain('script ran out at request #0');
  });

  it('computes replies from a function script and wakes waiters', async () => {
    server = await startOpenAIFake((req) => fakeReply.text(`echo ${req.body.messages.at(-1).content}`));
    const waiting = server.waitForRequests(1);
    const response = await post('/v1/chat/completions', {
      model: 'm',
      messages: [{ role: 'user', content: 'ping' }],
    });
    const json = (await response.json()) as { choices: { message: { content: string } }[] };
    expect(json.choices[0]?.message.content).toBe('echo ping');
    expect((await waiting)[0]?.body.model).toBe('m');
  });

  it('returns raw bodies with retry-after headers as scripted', async () => {
    server = await startOpenAIFake([fakeReply.rateLimited(3), fakeReply.malformed()]);
    const limited = await post('/v1/chat/completions', { model: 'm', messages: [] });
    expect([limited.status, limited.headers.get('retry-after')]).toEqual([429, '3']);
    const broken = await post('/v1/chat/completions', { model: 'm', messages: [] });
    await expect(broken.json()).rejects.toThrow();
  });

  it('closes every connection on close()', async () => {
    server = await startOpenAIFake([fakeReply.hang()]);
    const pending = post('/v1/chat/completions', { model: 'm', messages: [] }).catch(
      (error: unknown) => error,
    );
    await server.waitForRequests(1);
    expect(server.openConnections()).toBe(1);
    await server.close();
    expect(await pending).toBeInstanceOf(Error);
    expect(server.openConnections()).toBe(0);
  });
});
