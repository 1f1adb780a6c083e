import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { type ColloquyError, isColloquyError, type Logger } from '@colloquy/core';
import type {
  ModelProvider,
  ModelProviderConfig,
  ModelRequest,
  ModelStreamEvent,
} from '@colloquy/core/model';
import { fakeReply, type OpenAIFake, startOpenAIFake } from '@colloquy/testkit/openai-fake';
import { afterEach, describe, expect, it } from 'vitest';
import { createAiSdkModelProvider } from '../src/providers/ai-sdk-provider.js';
import { createModelProvider } from '../src/providers/create-model-provider.js';
import { createModelRouter } from '../src/providers/model-router.js';
import type { ModelProviderOptions } from '../src/providers/provider-config.js';
import { waitFor } from './support/harness.js';

const fakes: OpenAIFake[] = [];
afterEach(async () => {
  await Promise.all(fakes.splice(0).map((fake) => fake.close()));
});

async function fake(...args: Parameters<typeof startOpenAIFake>): Promise<OpenAIFake> {
  const started = await startOpenAIFake(...args);
  fakes.push(started);
  return started;
}

const fast: ModelProviderOptions = { retry: { baseDelayMs: 5, maxRetryAfterMs: 2_000 } };

function request(overrides: Partial<ModelRequest> = {}): ModelRequest {
  return {
    model: 'local/gpt-test',
    system: 'You are terse.',
    messages: [{ role: 'user', content: 'Hello' }],
    tools: [],
    ...overrides,
  };
}

/** A logger that hands each warning's message to `warn` and drops the rest. */
function onWarn(warn: (msg: string | undefined) => void): Logger {
  const logger: Logger = {
    debug: () => {},
    info: () => {},
    warn: (_obj, msg) => warn(msg),
    error: () => {},
    child: () => logger,
  };
  return logger;
}

async function collect(events: AsyncIterable<ModelStreamEvent>): Promise<ModelStreamEvent[]> {
  const out: ModelStreamEvent[] = [];
  for await (const event of events) out.push(event);
  return out;
}

async function failure(
  events: AsyncIterable<ModelStreamEvent>,
): Promise<{ error: ColloquyError; seen: ModelStreamEvent[] }> {
  const seen: ModelStreamEvent[] = [];
  try {
    for await (const event of events) seen.push(event);
  } catch (error) {
    if (!isColloquyError(error)) throw error;
    return { error, seen };
  }
  throw new Error(`expected the turn to fail, got ${JSON.stringify(seen)}`);
}

const sessionsList = {
  name: 'sessions_list',
  description: 'Lists sessions.',
  parameters: {
    type: 'object',
    properties: { limit: { type: 'number' }, kinds: { type: 'array', items: { type: 'string' } } },
    additionalProperties: false,
  },
};

/**
 * The AI SDK adapter (the path of kind "anthropic" and of `createAiSdkModelProvider`) over
 * `@ai-sdk/openai-compatible`, configured the way `createModelProvider` configures its providers.
 */
function overAiSdk(
  id: string,
  config: ModelProviderConfig,
  options: ModelProviderOptions = {},
): ModelProvider {
  const apiKey = config.apiKey ?? (config.apiKeyEnv ? options.env?.[config.apiKeyEnv] : undefined);
  const sdk = createOpenAICompatible({
    name: id,
    baseURL: config.baseURL ?? '',
    includeUsage: true,
    ...(apiKey ? { apiKey } : {}),
  });
  return createAiSdkModelProvider({
    id,
    languageModel: (modelId) => sdk.chatModel(modelId),
    providerOptions: (request) =>
      request.thinking ? { openaiCompatible: { reasoningEffort: request.thinking } } : undefined,
    ...(config.baseURL ? { baseURL: config.baseURL } : {}),
    ...(config.apiKeyEnv ? { apiKeyEnv: config.apiKeyEnv } : {}),
    ...(config.limits ? { limits: config.limits } : {}),
    ...(options.idleTimeoutMs !== undefined ? { idleTimeoutMs: options.idleTimeoutMs } : {}),
    ...(options.retry ? { retry: options.retry } : {}),
    ...(options.logger ? { logger: options.logger } : {}),
  });
}

// One contract for three paths: kind "openai-compatible" over Colloquy's own chat completions client
// on node:http (the default) and over a custom fetch, and the AI SDK adapter that kind "anthropic"
// uses, here over @ai-sdk/openai-compatible.
describe.each([
  ['its own client', createModelProvider],
  [
    'its own client over a custom fetch',
    (id: string, config: ModelProviderConfig, options?: ModelProviderOptions) =>
      createModelProvider(id, config, { ...options, fetch: (...args) => fetch(...args) }),
  ],
  ['the AI SDK adapter', overAiSdk],
] as const)('openai-compatible provider over %s', (_path, createModelProvider) => {
  it('streams text deltas and ends with finish and usage', async () => {
    const server = await fake([
      fakeReply.text(['Hel', 'lo ', 'there'], { usage: { promptTokens: 12, completionTokens: 3 } }),
    ]);
    const provider = createModelProvider('local', { kind: 'openai-compatible', baseURL: server.baseURL });
    const events = await collect(provider.streamTurn(request()));
    expect(events).toEqual([
      { type: 'text-delta', text: 'Hel' },
      { type: 'text-delta', text: 'lo ' },
      { type: 'text-delta', text: 'there' },
      {
        type: 'finish',
        finishReason: 'stop',
        usage: { inputTokens: 12, outputTokens: 3, totalTokens: 15, contextTokens: 12 },
      },
    ]);
  });

  it('sends the bare model id, the system prompt, the key and a streaming request', async () => {
    const server = await fake([fakeReply.text('ok')]);
    const provider = createModelProvider('local', {
      kind: 'openai-compatible',
      baseURL: server.baseURL,
      apiKey: 'sk-local',
    });
    await collect(provider.streamTurn(request({ maxOutputTokens: 64 })));
    const [sent] = server.requests;
    expect(sent?.path).toBe('/v1/chat/completions');
    expect(sent?.headers.authorization).toBe('Bearer sk-local');
    expect(sent?.body.model).toBe('gpt-test');
    expect(sent?.body.stream).toBe(true);
    expect(sent?.body.max_tokens).toBe(64);
    expect(sent?.body.messages).toEqual([
      { role: 'system', content: 'You are terse.' },
      { role: 'user', content: 'Hello' },
    ]);
  });

  it('reads the key from the variable named by apiKeyEnv', async () => {
    const server = await fake([fakeReply.text('ok')], { apiKey: 'from-env' });
    const provider = createModelProvider(
      'local',
      { kind: 'openai-compatible', baseURL: server.baseURL, apiKeyEnv: 'LOCAL_KEY' },
      { env: { LOCAL_KEY: 'from-env' } },
    );
    const events = await collect(provider.streamTurn(request()));
    expect(events.at(-1)?.type).toBe('finish');
  });

  it('passes tools as JSON schema and yields the model tool calls without running them', async () => {
    const server = await fake([
      { text: 'Let me look.', toolCalls: [{ id: 'call_a', name: 'sessions_list', arguments: { limit: 5 } }] },
    ]);
    const provider = createModelProvider('local', { kind: 'openai-compatible', baseURL: server.baseURL });
    const events = await collect(provider.streamTurn(request({ tools: [sessionsList] })));
    expect(events.filter((e) => e.type !== 'finish')).toEqual([
      { type: 'text-delta', text: 'Let me look.' },
      { type: 'tool-call', id: 'call_a', name: 'sessions_list', arguments: { limit: 5 } },
    ]);
    expect(events.at(-1)).toMatchObject({ type: 'finish', finishReason: 'tool-calls' });
    expect(server.requests).toHaveLength(1); // one model step per streamTurn
    expect(server.requests[0]?.body.tools).toEqual([
      {
        type: 'function',
        function: {
          name: 'sessions_list',
          description: 'Lists sessions.',
          parameters: sessionsList.parameters,
        },
      },
    ]);
  });

  it('yields a tool call with unparsable arguments for the caller to reject', async () => {
    const server = await fake([
      { toolCalls: [{ id: 'call_b', name: 'sessions_list', arguments: '{"limit": ' }] },
    ]);
    const provider = createModelProvider('local', { kind: 'openai-compatible', baseURL: server.baseURL });
    const events = await collect(provider.streamTurn(request({ tools: [sessionsList] })));
    const call = events.find((e) => e.type === 'tool-call');
    expect(call).toEqual({ type: 'tool-call', id: 'call_b', name: 'sessions_list', arguments: '{"limit": ' });
    expect(events.at(-1)?.type).toBe('finish');
  });

  it('sends earlier tool calls and their results back as tool messages', async () => {
    const server = await fake([fakeReply.text('Two sessions.')]);
    const provider = createModelProvider('local', { kind: 'openai-compatible', baseURL: server.baseURL });
    await collect(
      provider.streamTurn(
        request({
          tools: [sessionsList],
          messages: [
            { role: 'user', content: 'How many sessions?' },
            {
              role: 'assistant',
              content: [
                { type: 'text', text: 'Checking.' },
                { type: 'toolCall', id: 'call_1', name: 'sessions_list', arguments: { limit: 10 } },
              ],
            },
            { role: 'toolResult', toolCallId: 'call_1', toolName: 'sessions_list', content: '{"count":2}' },
          ],
        }),
      ),
    );
    expect(server.requests[0]?.body.messages.slice(1)).toEqual([
      { role: 'user', content: 'How many sessions?' },
      {
        role: 'assistant',
        content: 'Checking.',
        tool_calls: [
          { id: 'call_1', type: 'function', function: { name: 'sessions_list', arguments: '{"limit":10}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'call_1', content: '{"count":2}' },
    ]);
  });

  it('retries a 429 after the retry-after delay and then streams', async () => {
    const server = await fake([fakeReply.rateLimited(0.2), fakeReply.text('after the wait')]);
    const provider = createModelProvider(
      'local',
      { kind: 'openai-compatible', baseURL: server.baseURL },
      fast,
    );
    const events = await collect(provider.streamTurn(request()));
    expect(events[0]).toEqual({ type: 'text-delta', text: 'after the wait' });
    expect(server.requests).toHaveLength(2);
    const gap = (server.requests[1]?.receivedAt ?? 0) - (server.requests[0]?.receivedAt ?? 0);
    expect(gap).toBeGreaterThanOrEqual(180);
  });

  it('throws RATE_LIMITED with retryAfterMs when the server asks for a longer wait than the cap', async () => {
    const server = await fake([fakeReply.rateLimited(60)]);
    const provider = createModelProvider(
      'local',
      { kind: 'openai-compatible', baseURL: server.baseURL },
      fast,
    );
    const { error } = await failure(provider.streamTurn(request()));
    expect(error.code).toBe('RATE_LIMITED');
    expect(error.details).toMatchObject({
      retryAfterMs: 60_000,
      status: 429,
      provider: 'local',
      attempts: 1,
    });
    expect(error.message).toContain('Retry after 60 s');
    expect(server.requests).toHaveLength(1);
  });

  it('pauses every call of the provider for a 429 retry-after, not only the one that got it', async () => {
    const server = await fake((req) =>
      req.index === 0 ? fakeReply.rateLimited(0.3) : fakeReply.text(`reply ${req.index}`),
    );
    // The retry log comes right after the provider paused on the 429: the others start after it.
    let paused = false;
    const provider = createModelProvider(
      'local',
      { kind: 'openai-compatible', baseURL: server.baseURL },
      { ...fast, logger: onWarn((msg) => (paused ||= msg === 'model call failed; retrying')) },
    );
    const first = collect(provider.streamTurn(request()));
    await waitFor(() => paused, 3000, 'the client’s pause on the 429');
    const others = await Promise.all([1, 2, 3].map(() => collect(provider.streamTurn(request()))));
    await first;
    expect(others.map((events) => events[0]?.type)).toEqual(['text-delta', 'text-delta', 'text-delta']);
    expect(server.requests).toHaveLength(5);
    const limited = server.requests[0]!;
    for (const later of server.requests.slice(1)) {
      expect(later.receivedAt - (limited.answeredAt ?? Number.NaN)).toBeGreaterThanOrEqual(250);
    }
  });

  it('fails other calls fast with RATE_LIMITED while a 429 pause is longer than maxRetryAfterMs', async () => {
    const server = await fake([fakeReply.rateLimited(60)]);
    const provider = createModelProvider(
      'local',
      { kind: 'openai-compatible', baseURL: server.baseURL },
      fast,
    );
    expect((await failure(provider.streamTurn(request()))).error.code).toBe('RATE_LIMITED');
    const { error } = await failure(provider.streamTurn(request()));
    expect(error.code).toBe('RATE_LIMITED');
    expect(error.details).toMatchObject({ reason: 'rate-limited', provider: 'local' });
    expect(error.details.retryAfterMs).toBeGreaterThan(55_000);
    expect(error.message).toContain('models.providers.local.limits');
    expect(server.requests).toHaveLength(1);
  });

  it('keeps at most limits.concurrency calls of a provider in flight', async () => {
    const server = await fake(() => fakeReply.text('ok', { delayMs: 60 }));
    const provider = createModelProvider(
      'local',
      { kind: 'openai-compatible', baseURL: server.baseURL, limits: { concurrency: 3 } },
      fast,
    );
    const results = await Promise.all(
      Array.from({ length: 10 }, () => collect(provider.streamTurn(request()))),
    );
    expect(results.every((events) => events.at(-1)?.type === 'finish')).toBe(true);
    expect(server.maxInFlight).toBe(3);
  });

  it('stops waiting for a provider slot when the run is aborted', async () => {
    const server = await fake(() => fakeReply.text('ok', { delayMs: 300 }));
    const provider = createModelProvider(
      'local',
      { kind: 'openai-compatible', baseURL: server.baseURL, limits: { concurrency: 1 } },
      fast,
    );
    const busy = collect(provider.streamTurn(request()));
    await server.waitForRequests(1);
    const controller = new AbortController();
    const waiting = failure(provider.streamTurn(request({ signal: controller.signal })));
    controller.abort(new Error('stopped by the user'));
    const { error } = await waiting;
    expect(error.code).toBe('ABORTED');
    await busy;
    expect(server.requests).toHaveLength(1);
  });

  it('retries a 500 a bounded number of times, then throws MODEL_ERROR', async () => {
    const server = await fake([
      fakeReply.serverError(),
      fakeReply.serverError(502),
      fakeReply.serverError(503),
    ]);
    const provider = createModelProvider(
      'local',
      { kind: 'openai-compatible', baseURL: server.baseURL },
      fast,
    );
    const { error } = await failure(provider.streamTurn(request()));
    expect(error.code).toBe('MODEL_ERROR');
    expect(error.details).toMatchObject({ reason: 'server-error', status: 503, attempts: 3 });
    expect(server.requests).toHaveLength(3);
  });

  it('recovers when a 500 is followed by success', async () => {
    const server = await fake([fakeReply.serverError(), fakeReply.text('fine now')]);
    const provider = createModelProvider(
      'local',
      { kind: 'openai-compatible', baseURL: server.baseURL },
      fast,
    );
    const events = await collect(provider.streamTurn(request()));
    expect(events[0]).toEqual({ type: 'text-delta', text: 'fine now' });
  });

  it('never retries a 401 and says how to fix the key', async () => {
    const server = await fake([fakeReply.unauthorized(), fakeReply.text('never sent')]);
    const provider = createModelProvider(
      'local',
      { kind: 'openai-compatible', baseURL: server.baseURL, apiKeyEnv: 'LOCAL_KEY' },
      { ...fast, env: { LOCAL_KEY: 'wrong' } },
    );
    const { error } = await failure(provider.streamTurn(request()));
    expect(error.code).toBe('MODEL_ERROR');
    expect(error.details).toMatchObject({ reason: 'unauthorized', status: 401, retryable: false });
    expect(error.message).toContain('LOCAL_KEY');
    expect(error.message).not.toContain('wrong');
    expect(server.requests).toHaveLength(1);
  });

  it('reports a malformed stream as MODEL_ERROR malformed-response', async () => {
    const server = await fake([fakeReply.malformed()]);
    const provider = createModelProvider(
      'local',
      { kind: 'openai-compatible', baseURL: server.baseURL },
      fast,
    );
    const { error } = await failure(provider.streamTurn(request()));
    expect(error.code).toBe('MODEL_ERROR');
    expect(error.details.reason).toBe('malformed-response');
  });

  it('does not retry when the stream breaks after output started', async () => {
    const server = await fake([
      { text: ['one ', 'two ', 'three'], dropConnection: { afterChunks: 2 }, chunkDelayMs: 5 },
      fakeReply.text('should not be requested'),
    ]);
    const provider = createModelProvider(
      'local',
      { kind: 'openai-compatible', baseURL: server.baseURL },
      fast,
    );
    const { error, seen } = await failure(provider.streamTurn(request()));
    expect(seen).toEqual([{ type: 'text-delta', text: 'one ' }]);
    expect(error.code).toBe('MODEL_ERROR');
    expect(error.details).toMatchObject({ partial: true, retryable: false });
    expect(server.requests).toHaveLength(1);
  });

  it('reports a refused connection as a network MODEL_ERROR after bounded retries', async () => {
    const server = await fake();
    const baseURL = server.baseURL;
    await server.close();
    const provider = createModelProvider('local', { kind: 'openai-compatible', baseURL }, fast);
    const { error } = await failure(provider.streamTurn(request()));
    expect(error.code).toBe('MODEL_ERROR');
    expect(error.details).toMatchObject({ reason: 'network', attempts: 3 });
    expect(error.message).toContain('ECONNREFUSED');
  });

  it('times out with TIMEOUT when the server sends nothing', async () => {
    const server = await fake([fakeReply.hang()]);
    const provider = createModelProvider(
      'local',
      { kind: 'openai-compatible', baseURL: server.baseURL },
      { ...fast, idleTimeoutMs: 150 },
    );
    // The server never answers: only the idle timeout ends the call.
    const { error } = await failure(provider.streamTurn(request()));
    expect(error.code).toBe('TIMEOUT');
    expect(error.details).toMatchObject({ timeoutMs: 150 });
  });

  it('stops with ABORTED when the caller aborts mid-stream and closes the connection', async () => {
    const server = await fake([{ text: ['a', 'b', 'c', 'd', 'e', 'f'], chunkDelayMs: 100 }]);
    const provider = createModelProvider('local', { kind: 'openai-compatible', baseURL: server.baseURL });
    const controller = new AbortController();
    const turn = provider.streamTurn(request({ signal: controller.signal }));
    const seen: ModelStreamEvent[] = [];
    let caught: unknown;
    try {
      for await (const event of turn) {
        seen.push(event);
        controller.abort(new Error('user pressed stop'));
      }
    } catch (error) {
      caught = error;
    }
    expect(seen).toEqual([{ type: 'text-delta', text: 'a' }]);
    expect(isColloquyError(caught) && caught.code).toBe('ABORTED');
    expect((caught as Error).message).toContain('user pressed stop');
    await expect.poll(() => server.requests[0]?.closedEarly, { timeout: 2_000 }).toBe(true);
  });

  it('closes the HTTP stream when the consumer stops reading early', async () => {
    const server = await fake([{ text: ['a', 'b', 'c', 'd', 'e', 'f'], chunkDelayMs: 100 }]);
    const provider = createModelProvider('local', { kind: 'openai-compatible', baseURL: server.baseURL });
    for await (const event of provider.streamTurn(request())) {
      expect(event).toEqual({ type: 'text-delta', text: 'a' });
      break;
    }
    await expect.poll(() => server.requests[0]?.closedEarly, { timeout: 2_000 }).toBe(true);
  });

  it('throws ABORTED at once for an already-aborted signal', async () => {
    const server = await fake([fakeReply.text('unused')]);
    const provider = createModelProvider('local', { kind: 'openai-compatible', baseURL: server.baseURL });
    const { error } = await failure(provider.streamTurn(request({ signal: AbortSignal.abort() })));
    expect(error.code).toBe('ABORTED');
  });

  it('aborts a retry wait when the caller aborts', async () => {
    const server = await fake([fakeReply.rateLimited(1.5), fakeReply.text('late')]);
    const provider = createModelProvider(
      'local',
      { kind: 'openai-compatible', baseURL: server.baseURL },
      fast,
    );
    const controller = new AbortController();
    const abortAfterFirstRequest = setInterval(() => {
      if (server.requests.length === 1) controller.abort();
    }, 5);
    const { error } = await failure(provider.streamTurn(request({ signal: controller.signal })));
    clearInterval(abortAfterFirstRequest);
    // Had the wait run out, the retry would have been sent and answered 'late': it was cut short.
    expect(error.code).toBe('ABORTED');
    expect(server.requests).toHaveLength(1);
  });

  it('sends thinking levels as reasoning_effort', async () => {
    const server = await fake([fakeReply.text('hmm')]);
    const provider = createModelProvider('local', { kind: 'openai-compatible', baseURL: server.baseURL });
    await collect(provider.streamTurn(request({ thinking: 'high' })));
    expect(server.requests[0]?.body.reasoning_effort).toBe('high');
  });
});

describe('createModelProvider config errors', () => {
  it('requires a baseURL for openai-compatible', async () => {
    expect(() => createModelProvider('local', { kind: 'openai-compatible' })).toThrow(
      expect.objectContaining({
        code: 'CONFIG_INVALID',
        message: expect.stringContaining('models.providers.local.baseURL'),
      }),
    );
  });

  it('rejects an apiKeyEnv that is not set', async () => {
    expect(() =>
      createModelProvider(
        'local',
        { kind: 'openai-compatible', baseURL: 'http://127.0.0.1:1/v1', apiKeyEnv: 'NOPE' },
        { env: {} },
      ),
    ).toThrow(expect.objectContaining({ code: 'CONFIG_INVALID', message: expect.stringContaining('NOPE') }));
  });

  it('requires a key for anthropic', async () => {
    expect(() => createModelProvider('claude', { kind: 'anthropic' }, { env: {} })).toThrow(
      expect.objectContaining({
        code: 'CONFIG_INVALID',
        message: expect.stringContaining('ANTHROPIC_API_KEY'),
      }),
    );
  });

  it('rejects an unknown kind', async () => {
    const bad = { kind: 'gemini' } as unknown as Parameters<typeof createModelProvider>[1];
    expect(() => createModelProvider('g', bad)).toThrow(expect.objectContaining({ code: 'CONFIG_INVALID' }));
  });
});

describe('createModelRouter', () => {
  it('routes provider/model references to providers built from config', async () => {
    const a = await fake([fakeReply.text('from a')]);
    const b = await fake([fakeReply.text('from b')]);
    const router = createModelRouter({
      models: {
        providers: {
          a: { kind: 'openai-compatible', baseURL: a.baseURL },
          b: { kind: 'openai-compatible', baseURL: b.baseURL },
        },
      },
    });
    const fromB = await collect(router.streamTurn(request({ model: 'b/model-x' })));
    const fromA = await collect(router.streamTurn(request({ model: 'a/vendor/model-y' })));
    expect(fromB[0]).toEqual({ type: 'text-delta', text: 'from b' });
    expect(fromA[0]).toEqual({ type: 'text-delta', text: 'from a' });
    expect(b.requests[0]?.body.model).toBe('model-x');
    expect(a.requests[0]?.body.model).toBe('vendor/model-y');
    expect(router.providerFor('a/other')).toBe(router.providerFor('a/model'));
  });

  it('prefers ready-made providers and rejects unknown ones with the known list', async () => {
    const router = createModelRouter(
      { models: { providers: {} } },
      {
        providers: {
          canned: {
            id: 'canned',
            async *streamTurn() {
              yield {
                type: 'finish',
                finishReason: 'stop',
                usage: { inputTokens: 0, outputTokens: 0, totalTokens: 0 },
              };
            },
          },
        },
      },
    );
    expect(router.has('canned/x')).toBe(true);
    expect(router.has('missing/x')).toBe(false);
    expect(router.has('no-slash')).toBe(false);
    expect((await collect(router.streamTurn(request({ model: 'canned/x' }))))[0]?.type).toBe('finish');
    const { error } = await failure(router.streamTurn(request({ model: 'missing/x' })));
    expect(error.code).toBe('INVALID_ARGUMENT');
    expect(error.details.known).toEqual(['canned']);
  });
});

describe('provider deadlines and circuit breaker', () => {
  /** A logger that records each info and warning message. */
  function recordingLogger(lines: string[]): Logger {
    const logger: Logger = {
      debug: () => {},
      info: (_obj, msg) => lines.push(`info ${msg}`),
      warn: (_obj, msg) => lines.push(`warn ${msg}`),
      error: () => {},
      child: () => logger,
    };
    return logger;
  }

  it('fails with TIMEOUT when the first part misses timeouts.firstByteMs', async () => {
    const server = await fake([{ text: 'late', delayMs: 2_000 }]);
    const provider = createModelProvider('local', {
      kind: 'openai-compatible',
      baseURL: server.baseURL,
      timeouts: { firstByteMs: 100, idleMs: 10_000 },
    });
    const { error } = await failure(provider.streamTurn(request()));
    expect(error.code).toBe('TIMEOUT');
    expect(error.details).toMatchObject({ deadline: 'first-byte', timeoutMs: 100 });
    expect(error.message).toContain('models.providers.local.timeouts.firstByteMs');
  });

  it('fails with TIMEOUT when a trickling answer misses timeouts.totalMs', async () => {
    const chunks = Array.from({ length: 40 }, (_, i) => `w${i} `);
    const server = await fake([{ text: chunks, chunkDelayMs: 25 }]);
    const provider = createModelProvider('local', {
      kind: 'openai-compatible',
      baseURL: server.baseURL,
      timeouts: { totalMs: 300, idleMs: 10_000 },
    });
    const { error, seen } = await failure(provider.streamTurn(request()));
    expect(error.code).toBe('TIMEOUT');
    expect(error.details).toMatchObject({ deadline: 'total', timeoutMs: 300 });
    // Each part came well within the idle timeout: only the whole call's deadline ended it.
    expect(seen.length).toBeGreaterThan(0);
    expect(seen.length).toBeLessThan(chunks.length);
  });

  it('opens after failureThreshold provider failures, refuses without a request, probes and closes', async () => {
    let healthy = false;
    const server = await fake(() => (healthy ? fakeReply.text('back') : fakeReply.serverError(503)));
    const lines: string[] = [];
    const provider = createModelProvider(
      'local',
      {
        kind: 'openai-compatible',
        baseURL: server.baseURL,
        circuitBreaker: { failureThreshold: 3, coolDownMs: 300 },
      },
      { retry: { maxRetries: 0 }, logger: recordingLogger(lines) },
    );
    for (let i = 0; i < 3; i++) {
      expect((await failure(provider.streamTurn(request()))).error.details.reason).toBe('server-error');
    }
    expect(provider.health().circuit).toMatchObject({ state: 'open', consecutiveFailures: 3 });

    // Open: refused at once, and the dead host is not asked.
    for (let i = 0; i < 5; i++) {
      const { error } = await failure(provider.streamTurn(request()));
      expect(error.code).toBe('MODEL_ERROR');
      expect(error.details).toMatchObject({ reason: 'circuit-open', retryable: false });
      expect(error.details.retryAfterMs).toBeGreaterThan(0);
      expect(error.details.retryAfterMs).toBeLessThanOrEqual(300);
    }
    expect(server.requests).toHaveLength(3);

    // After the cool-down one probe goes out; it fails, so the circuit opens again.
    const coolDownOver = () => provider.health().circuit.retryAfterMs;
    await expect.poll(coolDownOver, { timeout: 2_000, interval: 20 }).toBe(0);
    expect((await failure(provider.streamTurn(request()))).error.details.reason).toBe('server-error');
    expect(server.requests).toHaveLength(4);
    expect(provider.health().circuit.state).toBe('open');

    // The provider is back: the next probe succeeds and closes the circuit.
    healthy = true;
    await expect.poll(coolDownOver, { timeout: 2_000, interval: 20 }).toBe(0);
    const events = await collect(provider.streamTurn(request()));
    expect(events.at(-1)?.type).toBe('finish');
    expect(provider.health().circuit).toEqual({ state: 'closed', consecutiveFailures: 0, retryAfterMs: 0 });
    await collect(provider.streamTurn(request()));

    // One line per transition, none per refused or successful call.
    expect(lines.filter((line) => line.includes('circuit'))).toEqual([
      'warn model provider circuit opened: calls fail at once until it cools down',
      'info model provider circuit half-open: one call probes',
      'warn model provider circuit opened: calls fail at once until it cools down',
      'info model provider circuit half-open: one call probes',
      'info model provider circuit closed: the provider answers again',
    ]);
  });

  it('counts timeouts and refused connections, but not a 4xx, as provider failures', async () => {
    const rejecting = await fake(() => fakeReply.unauthorized());
    const unauthorized = createModelProvider(
      'local',
      { kind: 'openai-compatible', baseURL: rejecting.baseURL, circuitBreaker: { failureThreshold: 2 } },
      { retry: { maxRetries: 0 } },
    );
    for (let i = 0; i < 4; i++) await failure(unauthorized.streamTurn(request()));
    expect(unauthorized.health().circuit).toMatchObject({ state: 'closed', consecutiveFailures: 0 });

    const gone = await fake();
    const baseURL = gone.baseURL;
    await gone.close();
    const refused = createModelProvider(
      'local',
      { kind: 'openai-compatible', baseURL, circuitBreaker: { failureThreshold: 2 } },
      { retry: { maxRetries: 0 } },
    );
    await failure(refused.streamTurn(request()));
    await failure(refused.streamTurn(request()));
    expect(refused.health().circuit.state).toBe('open');

    const hanging = await fake(() => fakeReply.hang());
    const slow = createModelProvider(
      'local',
      {
        kind: 'openai-compatible',
        baseURL: hanging.baseURL,
        timeouts: { firstByteMs: 50 },
        circuitBreaker: { failureThreshold: 2 },
      },
      { retry: { maxRetries: 0 } },
    );
    await failure(slow.streamTurn(request()));
    await failure(slow.streamTurn(request()));
    expect(slow.health().circuit.state).toBe('open');
  });

  it('reports the health of each provider the router created', async () => {
    const server = await fake([fakeReply.text('hi')]);
    const router = createModelRouter({
      models: { providers: { local: { kind: 'openai-compatible', baseURL: server.baseURL } } },
    });
    expect(router.health()).toEqual({});
    await collect(router.streamTurn(request()));
    expect(router.health()).toEqual({
      local: {
        limiter: { active: 0, waiting: 0, pausedForMs: 0 },
        circuit: { state: 'closed', consecutiveFailures: 0, retryAfterMs: 0 },
      },
    });
  });
});
