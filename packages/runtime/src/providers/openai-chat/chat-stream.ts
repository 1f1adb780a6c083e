import http from 'node:http';
import https from 'node:https';
import { APICallError, JSONParseError } from '@ai-sdk/provider';
import type { FinishReason, TokenUsage } from '@colloquy/core/model';
import { createParser } from 'eventsource-parser';
import { type DirectPart, parseToolArguments } from '../model-stream.js';
import type { OpenAiChatBody } from './chat-request.js';

/** Where chat completions requests go. */
export interface OpenAiChatEndpoint {
  /** `<baseURL>/chat/completions`. */
  url: URL;
  /** Sent with every request (the key as `authorization`, configured extra headers). */
  headers: Readonly<Record<string, string>>;
  /** Sends the request through this `fetch` (a proxy, a test) instead of `node:http(s)`. */
  fetch?: typeof globalThis.fetch;
}

/** A response whose headers arrived, whichever way it was requested. */
interface ChatResponse {
  status: number;
  statusText: string;
  headers: Record<string, string>;
  /** The body's bytes (none for a fetch response without a body). */
  body: AsyncIterable<Uint8Array> | Iterable<Uint8Array>;
  /** Releases the connection of a response that was not read to its end. */
  close(): void;
}

/** The most bytes of an error response kept for the error message. */
const ERROR_BODY_LIMIT = 64 * 1024;

/**
 * One streaming chat completions call over `node:http(s)` (keep-alive sockets of the global agents)
 * or the endpoint's `fetch`, its server-sent events parsed as they arrive: `text-delta` parts as text comes, the tool calls
 * (assembled from their argument pieces) and `finish` when the stream has ended. No `finish` is
 * yielded for a stream that ended before the model finished (no finish reason, no `[DONE]`).
 *
 * Failures are thrown as the AI SDK's errors, so `classifyModelError` reads them like those of
 * `@ai-sdk/openai-compatible`: `APICallError` for an HTTP error status or an unreachable server,
 * `JSONParseError` for a malformed event, the socket's error for a stream that broke off.
 *
 * @param endpoint - the URL and headers
 * @param body - the request (see `openAiChatBody`)
 * @param signal - aborts the request (the caller's abort, the idle timeout)
 */
export async function* streamOpenAiChat(
  endpoint: OpenAiChatEndpoint,
  body: OpenAiChatBody,
  signal: AbortSignal,
): AsyncGenerator<DirectPart> {
  const json = JSON.stringify(body);
  const response = endpoint.fetch
    ? await postWithFetch(endpoint.fetch, endpoint, json, body, signal)
    : await post(endpoint, json, body, signal);
  try {
    if (response.status < 200 || response.status >= 300) {
      throw await errorOf(response, endpoint, body);
    }
    const state = new ChatStreamState();
    for await (const data of eventData(response.body)) {
      const delta = state.read(data);
      if (delta !== '') yield { type: 'text-delta', text: delta };
    }
    yield* state.end();
  } finally {
    response.close();
  }
}

/**
 * The data of the server-sent events of a response body, as they arrive. An event the end of the
 * body cut off (no blank line after it) still counts.
 */
async function* eventData(body: ChatResponse['body']): AsyncGenerator<string> {
  let events: string[] = [];
  const parser = createParser({ onEvent: (event) => events.push(event.data) });
  const decoder = new TextDecoder();
  const take = () => {
    const taken = events;
    events = [];
    return taken;
  };
  for await (const chunk of body) {
    parser.feed(decoder.decode(chunk, { stream: true }));
    if (events.length > 0) yield* take();
  }
  parser.feed(`${decoder.decode()}\n\n`); // ends a cut-off last line and event
  yield* take();
}

/** What the events of one stream said so far. */
class ChatStreamState {
  #finishReason: FinishReason | undefined;
  #done = false;
  #usage: TokenUsage | undefined;
  readonly #toolCalls = new Map<number, { id: string; name: string; arguments: string }>();

  /** Reads one event; returns its text (possibly empty). */
  read(data: string): string {
    if (data === '[DONE]') {
      this.#done = true;
      return '';
    }
    let chunk: ChatChunk;
    try {
      chunk = JSON.parse(data) as ChatChunk;
    } catch (cause) {
      throw new JSONParseError({ text: data, cause });
    }
    if (typeof chunk !== 'object' || chunk === null)
      throw new JSONParseError({ text: data, cause: 'not an object' });
    if (chunk.error !== undefined) {
      const message = typeof chunk.error === 'string' ? chunk.error : chunk.error?.message;
      throw new Error(`the server sent an error in the stream: ${message ?? JSON.stringify(chunk.error)}`);
    }
    if (chunk.usage) {
      const inputTokens = numberOr0(chunk.usage.prompt_tokens);
      const outputTokens = numberOr0(chunk.usage.completion_tokens);
      this.#usage = {
        inputTokens,
        outputTokens,
        totalTokens: inputTokens + outputTokens,
        contextTokens: inputTokens,
      };
    }
    const choice = chunk.choices?.[0];
    if (!choice) return '';
    if (choice.finish_reason) this.#finishReason = finishReasonOf(choice.finish_reason);
    for (const call of choice.delta?.tool_calls ?? []) this.#addToolCallPiece(call);
    const content = choice.delta?.content;
    return typeof content === 'string' ? content : '';
  }

  /** The tool calls and the finish, once the stream ended; nothing when the model did not finish. */
  *end(): Generator<DirectPart> {
    if (this.#finishReason === undefined && !this.#done) return;
    for (const call of [...this.#toolCalls.entries()].sort(([a], [b]) => a - b).map(([, c]) => c)) {
      yield {
        type: 'tool-call',
        id: call.id,
        name: call.name,
        arguments: parseToolArguments(call.arguments),
      };
    }
    const finishReason = this.#finishReason ?? (this.#toolCalls.size > 0 ? 'tool-calls' : 'other');
    const usage = this.#usage ?? { inputTokens: 0, outputTokens: 0, totalTokens: 0, contextTokens: 0 };
    yield { type: 'finish', finishReason, usage };
  }

  #addToolCallPiece(piece: ToolCallPiece): void {
    const index = typeof piece.index === 'number' ? piece.index : this.#toolCalls.size;
    let call = this.#toolCalls.get(index);
    if (!call) {
      call = { id: '', name: '', arguments: '' };
      this.#toolCalls.set(index, call);
    }
    if (typeof piece.id === 'string' && piece.id !== '') call.id = piece.id;
    if (typeof piece.function?.name === 'string' && piece.function.name !== '')
      call.name = piece.function.name;
    if (typeof piece.function?.arguments === 'string') call.arguments += piece.function.arguments;
  }
}

/** A chat completions stream chunk, as far as it is read. */
interface ChatChunk {
  choices?: { delta?: { content?: unknown; tool_calls?: ToolCallPiece[] }; finish_reason?: string | null }[];
  usage?: { prompt_tokens?: unknown; completion_tokens?: unknown } | null;
  error?: { message?: string } | string;
}

interface ToolCallPiece {
  index?: number;
  id?: string;
  function?: { name?: string; arguments?: string };
}

const FINISH_REASONS: Readonly<Record<string, FinishReason>> = {
  stop: 'stop',
  length: 'length',
  content_filter: 'content-filter',
  tool_calls: 'tool-calls',
  function_call: 'tool-calls',
};

function finishReasonOf(reason: string): FinishReason {
  return FINISH_REASONS[reason] ?? 'other';
}

function numberOr0(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) ? value : 0;
}

/** Sends the request over `node:http(s)`; resolves with the response once its headers arrived. */
function post(
  endpoint: OpenAiChatEndpoint,
  json: string,
  body: OpenAiChatBody,
  signal: AbortSignal,
): Promise<ChatResponse> {
  return new Promise((resolve, reject) => {
    const client = endpoint.url.protocol === 'https:' ? https : http;
    const request = client.request(endpoint.url, {
      method: 'POST',
      headers: {
        ...endpoint.headers,
        'content-type': 'application/json',
        'content-length': String(Buffer.byteLength(json)),
      },
      signal,
    });
    request.once('response', (response) => {
      const headers: Record<string, string> = {};
      for (const [name, value] of Object.entries(response.headers)) {
        if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : value;
      }
      resolve({
        status: response.statusCode ?? 0,
        statusText: response.statusMessage ?? '',
        headers,
        body: response,
        close: () => {
          if (!response.complete) response.destroy();
        },
      });
    });
    request.once('error', (error) => reject(signal.aborted ? error : unreachable(error, endpoint, body)));
    request.end(json);
  });
}

/** Sends the request through a `fetch`; resolves with the response once its headers arrived. */
async function postWithFetch(
  fetch: typeof globalThis.fetch,
  endpoint: OpenAiChatEndpoint,
  json: string,
  body: OpenAiChatBody,
  signal: AbortSignal,
): Promise<ChatResponse> {
  let response: Response;
  try {
    response = await fetch(endpoint.url, {
      method: 'POST',
      headers: { ...endpoint.headers, 'content-type': 'application/json' },
      body: json,
      signal,
    });
  } catch (error) {
    throw signal.aborted ? error : unreachable(error, endpoint, body);
  }
  const stream = response.body;
  return {
    status: response.status,
    statusText: response.statusText,
    headers: Object.fromEntries(response.headers),
    body: stream ?? [],
    close: () => {
      if (stream && !stream.locked) stream.cancel().catch(() => {});
    },
  };
}

/** The `APICallError` of a request that reached no server (refused, reset, DNS). */
function unreachable(error: unknown, endpoint: OpenAiChatEndpoint, body: OpenAiChatBody): APICallError {
  return new APICallError({
    message: `Cannot connect to API: ${error instanceof Error ? error.message : String(error)}`,
    url: endpoint.url.toString(),
    requestBodyValues: body,
    cause: error,
    isRetryable: true,
  });
}

/** The `APICallError` of an error status, with the start of the response body. */
async function errorOf(
  response: ChatResponse,
  endpoint: OpenAiChatEndpoint,
  body: OpenAiChatBody,
): Promise<APICallError> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    for await (const chunk of response.body) {
      if (size < ERROR_BODY_LIMIT) chunks.push(chunk);
      size += chunk.length;
    }
  } catch {
    // a body cut off: what arrived is enough for the message
  }
  const text = Buffer.concat(chunks).toString('utf8').slice(0, ERROR_BODY_LIMIT);
  const status = response.status;
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    data = undefined;
  }
  return new APICallError({
    message: response.statusText || `HTTP ${status}`,
    url: endpoint.url.toString(),
    requestBodyValues: body,
    statusCode: status,
    responseHeaders: response.headers,
    responseBody: text,
    isRetryable: status === 408 || status === 409 || status === 429 || status >= 500,
    ...(data !== undefined ? { data } : {}),
  });
}
