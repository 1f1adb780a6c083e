/**
 * A local fake of an OpenAI-compatible chat server (and, cheaply, of the Anthropic messages API) for
 * tests. It listens on 127.0.0.1 with an ephemeral port, answers each request with the next reply of a
 * script, and records every request for assertions.
 *
 * Routes:
 * - `POST /v1/chat/completions`: streaming (SSE, `stream: true`) and non-streaming JSON.
 * - `POST /v1/messages`: the Anthropic messages API, streaming SSE and non-streaming JSON.
 * - `GET /v1/models`: lists the model ids seen in replies (or `fake-model`).
 *
 * The module depends only on `node:http`, so any test (vitest or not) can import it.
 *
 * @example
 * ```ts
 * const fake = await startOpenAIFake([fakeReply.text('Hello'), fakeReply.toolCall('sessions_list', {})]);
 * const provider = createModelProvider('local', { kind: 'openai-compatible', baseURL: fake.baseURL });
 * // ... drive the provider ...
 * expect(fake.requests[0]?.body.model).toBe('gpt-test');
 * await fake.close();
 * ```
 */
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/** A tool call the fake model makes. `arguments` is JSON-encoded unless it is already a string. */
export interface FakeToolCall {
  /** Default `call_<n>`. */
  id?: string;
  /** The tool name. */
  name: string;
  /** An object (JSON-encoded by the fake) or a raw string sent as is (to test malformed arguments). */
  arguments: unknown;
}

/** Token counts the fake reports. Defaults are derived from the request and reply sizes. */
export interface FakeUsage {
  /** Prompt (input) tokens. */
  promptTokens: number;
  /** Completion (output) tokens. */
  completionTokens: number;
}

/** One scripted answer of the fake. */
export interface FakeReply {
  /** Assistant text. An array is streamed as one chunk per element. */
  text?: string | string[];
  /** Tool calls the model makes. */
  toolCalls?: FakeToolCall[];
  /** Default `tool_calls` when there are tool calls, else `stop`. OpenAI spelling; mapped for Anthropic. */
  finishReason?: 'stop' | 'tool_calls' | 'length' | 'content_filter';
  /** Token counts reported. Default: derived from the request and reply sizes. */
  usage?: FakeUsage;
  /** The model name echoed back. Default: the requested model. */
  model?: string;
  /** HTTP status for an error answer (401, 429, 500, ...). The body is an error JSON unless `body` is set. */
  status?: number;
  /** The error message for an error answer. */
  errorMessage?: string;
  /** Extra response headers, e.g. `{ 'retry-after': '1' }`. */
  headers?: Record<string, string>;
  /** A raw body sent as is with `status` (default 200): use it for malformed JSON. */
  body?: string;
  /** Raw SSE `data:` payloads sent as is for a streaming request (then `[DONE]`). */
  rawChunks?: string[];
  /** Wait this long before answering (honours the client going away). */
  delayMs?: number;
  /** Wait this long between streamed chunks. */
  chunkDelayMs?: number;
  /** Stream the first chunk(s) and then sever the connection (`afterChunks` chunks, default 1). */
  dropConnection?: { afterChunks?: number };
  /** Never answer (the client must time out or abort). */
  hang?: boolean;
}

/** What the fake saw for one request. */
export interface RecordedRequest {
  /** 0-based index over all requests to scripted routes. */
  index: number;
  /** The HTTP method. */
  method: string;
  /** The request path, without the query string. */
  path: string;
  /** The request headers. */
  headers: IncomingHttpHeaders;
  /** The parsed JSON body (`undefined` when the body was not JSON). */
  // biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary request fields; this is a test fake.
  body: any;
  /** The body as received. */
  rawBody: string;
  /** Which API the request used. */
  api: 'openai' | 'anthropic';
  /** True when the client asked for a streamed answer. */
  stream: boolean;
  /** Epoch milliseconds the request arrived. */
  receivedAt: number;
  /** When the answer was complete or the connection closed (`undefined` while in flight). */
  answeredAt?: number;
  /** True once the client went away before the reply was complete (an abort reached the server). */
  closedEarly: boolean;
}

/** A function script: computes the reply from the request. */
export type FakeScriptFn = (request: RecordedRequest) => FakeReply | Promise<FakeReply>;

/** A list of replies consumed in order, or a function of the request. */
export type FakeScript = FakeReply[] | FakeScriptFn;

/** Options of {@link startOpenAIFake}. */
export interface OpenAIFakeOptions {
  /** When set, requests without this key (Bearer or `x-api-key`) are answered 401. */
  apiKey?: string;
  /** Port to listen on. Default 0 (ephemeral). */
  port?: number;
}

/** A running fake. */
export interface OpenAIFake {
  /** `http://127.0.0.1:<port>/v1`: the `baseURL` for OpenAI-compatible and Anthropic clients. */
  readonly baseURL: string;
  /** `http://127.0.0.1:<port>`. */
  readonly origin: string;
  /** The port the fake listens on. */
  readonly port: number;
  /** Every request to a scripted route, in arrival order. */
  readonly requests: RecordedRequest[];
  /** Replies not yet consumed (array scripts only). */
  readonly pending: number;
  /** Appends replies to an array script (or replaces a function script with them). */
  push(...replies: FakeReply[]): void;
  /** Replaces the script. */
  setScript(script: FakeScript): void;
  /** Resolves once `count` requests have arrived (or rejects after `timeoutMs`, default 5000). */
  waitForRequests(count: number, timeoutMs?: number): Promise<RecordedRequest[]>;
  /** How many client connections are currently open (idle keep-alive connections count). */
  openConnections(): number;
  /** Scripted requests being answered right now. */
  inFlight(): number;
  /** The most scripted requests that were ever in flight at once. */
  readonly maxInFlight: number;
  /** Stops listening and destroys every open connection. Idempotent. */
  close(): Promise<void>;
}

/** Builders for common replies. */
export const fakeReply = {
  /** A plain text answer, streamed in the given chunks. */
  text: (text: string | string[], extra: Partial<FakeReply> = {}): FakeReply => ({ text, ...extra }),
  /** One tool call (optionally after some text). */
  toolCall: (name: string, args: unknown, extra: Partial<FakeReply> = {}): FakeReply => ({
    toolCalls: [{ name, arguments: args }],
    ...extra,
  }),
  /** 429 Too Many Requests with a `retry-after` header in seconds. */
  rateLimited: (retryAfterSeconds?: number): FakeReply => ({
    status: 429,
    errorMessage: 'Rate limit reached for requests',
    ...(retryAfterSeconds !== undefined ? { headers: { 'retry-after': String(retryAfterSeconds) } } : {}),
  }),
  /** 500 Internal Server Error. */
  serverError: (status = 500): FakeReply => ({ status, errorMessage: 'The server had an error' }),
  /** 401 Unauthorized. */
  unauthorized: (): FakeReply => ({ status: 401, errorMessage: 'Incorrect API key provided' }),
  /** A 200 answer whose body is not valid JSON (and not valid SSE JSON when streaming). */
  malformed: (): FakeReply => ({
    body: '{"id": "chatcmpl-broken", "choices": [',
    rawChunks: ['{"id": "x", "choi'],
  }),
  /** A reply that never comes. */
  hang: (): FakeReply => ({ hang: true }),
};

const SCRIPTED_PATHS: Record<string, RecordedRequest['api']> = {
  '/v1/chat/completions': 'openai',
  '/chat/completions': 'openai',
  '/v1/messages': 'anthropic',
  '/messages': 'anthropic',
};

/**
 * Starts the fake on 127.0.0.1.
 *
 * @param script - replies consumed one per request, or a function of the request. Default: empty (every
 *   request gets a 500 saying the script ran out).
 * @param options - see {@link OpenAIFakeOptions}
 * @returns the running fake; call `close()` in `afterEach`/`afterAll`.
 */
export async function startOpenAIFake(
  script: FakeScript = [],
  options: OpenAIFakeOptions = {},
): Promise<OpenAIFake> {
  let current: FakeScript = Array.isArray(script) ? [...script] : script;
  const requests: RecordedRequest[] = [];
  const sockets = new Set<Socket>();
  const waiters = new Set<() => void>();
  let toolCallCounter = 0;
  let closed = false;
  let inFlight = 0;
  let maxInFlight = 0;

  const nextReply = async (req: RecordedRequest): Promise<FakeReply> => {
    if (typeof current === 'function') return current(req);
    const reply = current.shift();
    if (reply) return reply;
    return {
      status: 500,
      errorMessage: `openai-fake: the script ran out at request #${req.index}; add a reply with fake.push(...)`,
    };
  };

  const server = createServer((req, res) => {
    void handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) {
        res.writeHead(500, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: `openai-fake crashed: ${String(error)}` } }));
      } else {
        res.destroy();
      }
    });
  });

  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    if (req.method === 'GET' && (path === '/v1/models' || path === '/models')) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ object: 'list', data: [{ id: 'fake-model', object: 'model' }] }));
      return;
    }
    const api = SCRIPTED_PATHS[path];
    if (req.method !== 'POST' || !api) {
      sendError(res, 'openai', 404, `openai-fake: no route ${req.method} ${path}`);
      return;
    }
    const rawBody = await readBody(req);
    let body: unknown;
    try {
      body = JSON.parse(rawBody);
    } catch {
      body = undefined;
    }
    const parsed = (body ?? {}) as { stream?: boolean };
    const recorded: RecordedRequest = {
      index: requests.length,
      method: req.method,
      path,
      headers: req.headers,
      body,
      rawBody,
      api,
      stream: parsed.stream === true,
      receivedAt: Date.now(),
      closedEarly: false,
    };
    inFlight++;
    maxInFlight = Math.max(maxInFlight, inFlight);
    res.on('close', () => {
      inFlight--;
      recorded.answeredAt = Date.now();
      if (!res.writableFinished) recorded.closedEarly = true;
    });
    requests.push(recorded);
    for (const wake of waiters) wake();

    if (options.apiKey !== undefined && !hasKey(req.headers, options.apiKey)) {
      sendError(res, api, 401, 'Incorrect API key provided');
      return;
    }
    const reply = await nextReply(recorded);
    if (reply.hang) return; // the client must give up; close() destroys the socket
    if (reply.delayMs) await delay(reply.delayMs, res);
    if (res.destroyed) return;

    if (reply.status !== undefined && reply.status >= 400 && reply.body === undefined) {
      sendError(res, api, reply.status, reply.errorMessage ?? `HTTP ${reply.status}`, reply.headers);
      return;
    }
    if (reply.body !== undefined && !(recorded.stream && reply.rawChunks)) {
      res.writeHead(reply.status ?? 200, { 'content-type': 'application/json', ...reply.headers });
      res.end(reply.body);
      return;
    }
    const ids = (reply.toolCalls ?? []).map((call) => call.id ?? `call_${++toolCallCounter}`);
    if (api === 'openai') {
      if (recorded.stream) await streamOpenAI(res, recorded, reply, ids);
      else sendOpenAIJson(res, recorded, reply, ids);
    } else if (recorded.stream) {
      await streamAnthropic(res, recorded, reply, ids);
    } else {
      sendAnthropicJson(res, recorded, reply, ids);
    }
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const origin = `http://127.0.0.1:${port}`;

  return {
    baseURL: `${origin}/v1`,
    origin,
    port,
    requests,
    get pending() {
      return Array.isArray(current) ? current.length : 0;
    },
    push(...replies) {
      if (Array.isArray(current)) current.push(...replies);
      else current = [...replies];
    },
    setScript(next) {
      current = Array.isArray(next) ? [...next] : next;
    },
    waitForRequests(count, timeoutMs = 5000) {
      if (requests.length >= count) return Promise.resolve(requests.slice(0, count));
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(
            new Error(`openai-fake: expected ${count} requests, saw ${requests.length} in ${timeoutMs} ms`),
          );
        }, timeoutMs);
        const check = () => {
          if (requests.length < count) return;
          clearTimeout(timer);
          waiters.delete(check);
          resolve(requests.slice(0, count));
        };
        waiters.add(check);
      });
    },
    openConnections: () => sockets.size,
    inFlight: () => inFlight,
    get maxInFlight() {
      return maxInFlight;
    },
    close() {
      if (closed) return Promise.resolve();
      closed = true;
      return new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const socket of sockets) socket.destroy();
      });
    },
  };
}

// --- OpenAI chat completions ---

function openAIUsage(req: RecordedRequest, reply: FakeReply) {
  const usage = reply.usage ?? defaultUsage(req, reply);
  return {
    prompt_tokens: usage.promptTokens,
    completion_tokens: usage.completionTokens,
    total_tokens: usage.promptTokens + usage.completionTokens,
  };
}

function finishOf(reply: FakeReply): NonNullable<FakeReply['finishReason']> {
  return reply.finishReason ?? (reply.toolCalls?.length ? 'tool_calls' : 'stop');
}

function encodeArgs(args: unknown): string {
  return typeof args === 'string' ? args : JSON.stringify(args ?? {});
}

function textChunks(reply: FakeReply): string[] {
  if (reply.text === undefined) return [];
  return Array.isArray(reply.text) ? reply.text : [reply.text];
}

function sendOpenAIJson(res: ServerResponse, req: RecordedRequest, reply: FakeReply, ids: string[]): void {
  const text = textChunks(reply).join('');
  const message: Record<string, unknown> = { role: 'assistant', content: text.length > 0 ? text : null };
  if (reply.toolCalls?.length) {
    message.tool_calls = reply.toolCalls.map((call, i) => ({
      id: ids[i],
      type: 'function',
      function: { name: call.name, arguments: encodeArgs(call.arguments) },
    }));
  }
  res.writeHead(reply.status ?? 200, { 'content-type': 'application/json', ...reply.headers });
  res.end(
    JSON.stringify({
      id: `chatcmpl-${req.index}`,
      object: 'chat.completion',
      created: Math.floor(req.receivedAt / 1000),
      model: reply.model ?? req.body?.model ?? 'fake-model',
      choices: [{ index: 0, message, finish_reason: finishOf(reply) }],
      usage: openAIUsage(req, reply),
    }),
  );
}

async function streamOpenAI(
  res: ServerResponse,
  req: RecordedRequest,
  reply: FakeReply,
  ids: string[],
): Promise<void> {
  const base = {
    id: `chatcmpl-${req.index}`,
    object: 'chat.completion.chunk',
    created: Math.floor(req.receivedAt / 1000),
    model: reply.model ?? req.body?.model ?? 'fake-model',
  };
  const payloads: string[] = [];
  if (reply.rawChunks) {
    payloads.push(...reply.rawChunks);
  } else {
    payloads.push(
      JSON.stringify({ ...base, choices: [{ index: 0, delta: { role: 'assistant', content: '' } }] }),
    );
    for (const piece of textChunks(reply)) {
      payloads.push(JSON.stringify({ ...base, choices: [{ index: 0, delta: { content: piece } }] }));
    }
    (reply.toolCalls ?? []).forEach((call, i) => {
      const args = encodeArgs(call.arguments);
      const half = Math.floor(args.length / 2);
      // The name and the first half of the arguments, then the rest: clients must join deltas.
      payloads.push(
        JSON.stringify({
          ...base,
          choices: [
            {
              index: 0,
              delta: {
                tool_calls: [
                  {
                    index: i,
                    id: ids[i],
                    type: 'function',
                    function: { name: call.name, arguments: args.slice(0, half) },
                  },
                ],
              },
            },
          ],
        }),
        JSON.stringify({
          ...base,
          choices: [
            { index: 0, delta: { tool_calls: [{ index: i, function: { arguments: args.slice(half) } }] } },
          ],
        }),
      );
    });
    payloads.push(
      JSON.stringify({ ...base, choices: [{ index: 0, delta: {}, finish_reason: finishOf(reply) }] }),
    );
    payloads.push(JSON.stringify({ ...base, choices: [], usage: openAIUsage(req, reply) }));
  }
  await writeSse(
    res,
    reply,
    payloads.map((data) => ({ data })),
    { data: '[DONE]' },
  );
}

// --- Anthropic messages ---

const ANTHROPIC_STOP: Record<string, string> = {
  stop: 'end_turn',
  tool_calls: 'tool_use',
  length: 'max_tokens',
  content_filter: 'refusal',
};

function sendAnthropicJson(res: ServerResponse, req: RecordedRequest, reply: FakeReply, ids: string[]): void {
  const usage = reply.usage ?? defaultUsage(req, reply);
  const content: unknown[] = [];
  const text = textChunks(reply).join('');
  if (text) content.push({ type: 'text', text });
  (reply.toolCalls ?? []).forEach((call, i) => {
    content.push({ type: 'tool_use', id: ids[i], name: call.name, input: call.arguments ?? {} });
  });
  res.writeHead(reply.status ?? 200, { 'content-type': 'application/json', ...reply.headers });
  res.end(
    JSON.stringify({
      id: `msg_${req.index}`,
      type: 'message',
      role: 'assistant',
      model: reply.model ?? req.body?.model ?? 'fake-model',
      content,
      stop_reason: ANTHROPIC_STOP[finishOf(reply)],
      stop_sequence: null,
      usage: { input_tokens: usage.promptTokens, output_tokens: usage.completionTokens },
    }),
  );
}

async function streamAnthropic(
  res: ServerResponse,
  req: RecordedRequest,
  reply: FakeReply,
  ids: string[],
): Promise<void> {
  const usage = reply.usage ?? defaultUsage(req, reply);
  const events: { event?: string; data: string }[] = [];
  const push = (event: string, data: Record<string, unknown>) =>
    events.push({ event, data: JSON.stringify({ type: event, ...data }) });
  if (reply.rawChunks) {
    events.push(...reply.rawChunks.map((data) => ({ event: 'message_start', data })));
  } else {
    push('message_start', {
      message: {
        id: `msg_${req.index}`,
        type: 'message',
        role: 'assistant',
        model: reply.model ?? req.body?.model ?? 'fake-model',
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { input_tokens: usage.promptTokens, output_tokens: 1 },
      },
    });
    let index = 0;
    const pieces = textChunks(reply);
    if (pieces.length > 0) {
      push('content_block_start', { index, content_block: { type: 'text', text: '' } });
      for (const piece of pieces)
        push('content_block_delta', { index, delta: { type: 'text_delta', text: piece } });
      push('content_block_stop', { index });
      index++;
    }
    (reply.toolCalls ?? []).forEach((call, i) => {
      push('content_block_start', {
        index,
        content_block: { type: 'tool_use', id: ids[i], name: call.name, input: {} },
      });
      push('content_block_delta', {
        index,
        delta: { type: 'input_json_delta', partial_json: encodeArgs(call.arguments) },
      });
      push('content_block_stop', { index });
      index++;
    });
    push('message_delta', {
      delta: { stop_reason: ANTHROPIC_STOP[finishOf(reply)], stop_sequence: null },
      usage: { output_tokens: usage.completionTokens },
    });
    push('message_stop', {});
  }
  await writeSse(res, reply, events);
}

// --- shared ---

function sendError(
  res: ServerResponse,
  api: RecordedRequest['api'],
  status: number,
  message: string,
  headers: Record<string, string> = {},
): void {
  const type =
    status === 401
      ? 'authentication_error'
      : status === 429
        ? 'rate_limit_error'
        : status >= 500
          ? 'api_error'
          : 'invalid_request_error';
  const body =
    api === 'anthropic'
      ? { type: 'error', error: { type, message } }
      : { error: { message, type, code: status === 401 ? 'invalid_api_key' : null } };
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

async function writeSse(
  res: ServerResponse,
  reply: FakeReply,
  events: { event?: string; data: string }[],
  done?: { data: string },
): Promise<void> {
  res.writeHead(reply.status ?? 200, {
    'content-type': 'text/event-stream',
    'cache-control': 'no-cache',
    connection: 'keep-alive',
    ...reply.headers,
  });
  const dropAfter = reply.dropConnection ? (reply.dropConnection.afterChunks ?? 1) : undefined;
  let written = 0;
  for (const { event, data } of events) {
    if (res.destroyed) return;
    if (dropAfter !== undefined && written >= dropAfter) {
      res.socket?.destroy();
      return;
    }
    res.write(`${event ? `event: ${event}\n` : ''}data: ${data}\n\n`);
    written++;
    if (reply.chunkDelayMs) await delay(reply.chunkDelayMs, res);
  }
  if (done && !res.destroyed) res.write(`data: ${done.data}\n\n`);
  res.end();
}

function defaultUsage(req: RecordedRequest, reply: FakeReply): FakeUsage {
  const out = textChunks(reply).join('').length + JSON.stringify(reply.toolCalls ?? []).length - 2;
  return {
    promptTokens: Math.max(1, Math.ceil(req.rawBody.length / 4)),
    completionTokens: Math.max(1, Math.ceil(out / 4)),
  };
}

function hasKey(headers: IncomingHttpHeaders, key: string): boolean {
  return headers.authorization === `Bearer ${key}` || headers['x-api-key'] === key;
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

/** Waits `ms`, or less if the client goes away (so a slow reply never outlives its request). */
function delay(ms: number, res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      res.off('close', done);
      resolve();
    }
    res.on('close', done);
  });
}
