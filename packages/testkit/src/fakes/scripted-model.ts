import { ColloquyError, type ErrorCode } from '@colloquy/core';
import type {
  FinishReason,
  ModelMessage,
  ModelProvider,
  ModelRequest,
  ModelStreamEvent,
  TokenUsage,
} from '@colloquy/core/model';
import { waitForCount } from './wait-for-count.js';

/** A tool call the scripted model makes. */
export interface ScriptedToolCall {
  /** Default `call_<turn>_<index>` (deterministic). */
  id?: string;
  /** The tool name. */
  name: string;
  /** The arguments the model "sends". Default `{}`. */
  arguments?: unknown;
}

/** One scripted model turn. */
export interface ScriptedReply {
  /** Text streamed as `text-delta` events; an array streams one delta per element. */
  text?: string | string[];
  /** Tool calls yielded after the text. */
  toolCalls?: ScriptedToolCall[];
  /** Default `tool-calls` when there are tool calls, else `stop`. */
  finishReason?: FinishReason;
  /** Reported usage. Default: estimated at 4 characters per token. */
  usage?: Partial<TokenUsage>;
  /** Wait this long before the first event (aborts cut it short). Default 0: no timer at all. */
  delayMs?: number;
  /** Wait this long between events. Default 0. */
  chunkDelayMs?: number;
  /**
   * Fail the turn. Thrown after this reply's text and tool calls were streamed, so a reply with only
   * `error` fails before any output. An `Error` is thrown as is; `{ code }` becomes a `ColloquyError`.
   */
  error?: Error | { code: ErrorCode; message?: string; details?: Record<string, unknown> };
}

/** What a script function is told besides the request. */
export interface ScriptTurn {
  /** 0-based index of this turn over the model's life. */
  index: number;
  /** The same request list as `model.requests` (this request included). */
  requests: readonly ModelRequest[];
}

/** A function step: computes the reply from the request. A string is shorthand for `{ text }`. */
export type ScriptFn = (request: ModelRequest, turn: ScriptTurn) => ScriptStep | Promise<ScriptStep>;

/** One step of a script: a reply, a plain text reply, or a function of the request. */
export type ScriptStep = ScriptedReply | string | ScriptFn;

/** Options of {@link createScriptedModel}. */
export interface ScriptedModelOptions {
  /** The provider id. Default `scripted` (so models are named `scripted/<anything>`). */
  id?: string;
  /**
   * How many of the latest requests `requests` keeps. Default: every one. A benchmark that runs
   * thousands of turns keeps a few: each request holds its whole prompt, so keeping them all grows
   * the heap with the square of the turns of a session, and the garbage collector's work with it.
   */
  keepRequests?: number;
}

/** A scripted `ModelProvider` with its recorded requests and assertion helpers. */
export interface ScriptedModel extends ModelProvider {
  /**
   * Every request received, oldest first (arrays copied; the signal left out); only the latest
   * `keepRequests` when that option is set.
   */
  readonly requests: readonly ModelRequest[];
  /** The last request received, if any. */
  readonly lastRequest: ModelRequest | undefined;
  /** How many turns were requested (all of them, also those `keepRequests` let go). */
  readonly callCount: number;
  /** Scripted steps not yet consumed (a function script never runs out: `Infinity`). */
  readonly remaining: number;
  /** Appends steps to the script (after a function script, they are used first). */
  push(...steps: ScriptStep[]): void;
  /**
   * Checks the next request with `check` (return `false` or throw to fail). The promise resolves with
   * the request, or rejects with the failure; a failed check also fails that turn with `MODEL_ERROR`.
   */
  expectNextRequest(check?: (request: ModelRequest) => boolean | undefined): Promise<ModelRequest>;
  /**
   * Resolves with `requests` once `count` requests in total arrived; rejects after `timeoutMs`
   * (default 5000).
   */
  waitForRequests(count: number, timeoutMs?: number): Promise<readonly ModelRequest[]>;
  /** Throws `MODEL_ERROR` if scripted steps were not consumed (call at the end of a test). */
  assertDone(): void;
}

/**
 * Creates a model provider that answers from a script instead of a network: for unit tests of agents,
 * tools and the runtime. Each `streamTurn` consumes the next step; with no delays it is zero-latency.
 * It never imports vitest and works in any test runner.
 *
 * @param script - replies consumed one per turn, or one function called for every turn
 * @param options - see {@link ScriptedModelOptions}
 * @returns the model; `streamTurn` throws `MODEL_ERROR` when the script ran out, `ABORTED` when the
 *   request's signal aborts, and any error a step scripts
 * @example
 * ```ts
 * const model = createScriptedModel([
 *   { toolCalls: [{ name: 'sessions_list', arguments: { limit: 5 } }] },
 *   'There are two sessions.',
 * ]);
 * // ... run an agent with model 'scripted/test' ...
 * expect(model.requests[1]?.messages.at(-1)).toMatchObject({ role: 'toolResult', toolName: 'sessions_list' });
 * model.assertDone();
 * ```
 */
export function createScriptedModel(
  script: readonly ScriptStep[] | ScriptFn,
  options: ScriptedModelOptions = {},
): ScriptedModel {
  const id = options.id ?? 'scripted';
  const queue: ScriptStep[] = typeof script === 'function' ? [] : [...script];
  const fallback: ScriptFn | undefined = typeof script === 'function' ? script : undefined;
  const keep = options.keepRequests ?? Number.POSITIVE_INFINITY;
  if (!(keep >= 0)) {
    throw new ColloquyError(
      'INVALID_ARGUMENT',
      `createScriptedModel: keepRequests must be a number of requests, 0 or more (got ${String(keep)}).`,
      { field: 'keepRequests' },
    );
  }
  const requests: ModelRequest[] = [];
  let received = 0;
  const expectations: {
    check: (request: ModelRequest) => boolean | undefined;
    resolve: (request: ModelRequest) => void;
    reject: (error: Error) => void;
  }[] = [];
  const waiters = new Set<() => void>();
  let scriptedCount = queue.length;

  async function resolveStep(request: ModelRequest, index: number): Promise<ScriptedReply> {
    let step: ScriptStep | undefined = queue.shift() ?? fallback;
    if (step === undefined) {
      throw new ColloquyError(
        'MODEL_ERROR',
        `Scripted model "${id}" ran out of replies at turn #${index} after ${scriptedCount} scripted. ` +
          `Add replies to the script or with model.push(...). Last user message: ${JSON.stringify(lastUserText(request) ?? '')}`,
        { provider: id, turn: index, scripted: scriptedCount, reason: 'script-exhausted' },
      );
    }
    for (let depth = 0; typeof step === 'function'; depth++) {
      if (depth > 8)
        throw new ColloquyError('MODEL_ERROR', 'Scripted model: a script function kept returning functions.');
      step = await step(request, { index, requests });
    }
    return typeof step === 'string' ? { text: step } : step;
  }

  async function* streamTurn(request: ModelRequest): AsyncGenerator<ModelStreamEvent> {
    const index = received++;
    const recorded: ModelRequest = { ...request, messages: [...request.messages], tools: [...request.tools] };
    delete recorded.signal;
    requests.push(recorded);
    if (requests.length > keep) requests.shift();
    for (const wake of waiters) wake();

    const expectation = expectations.shift();
    if (expectation) {
      let failure: Error | undefined;
      try {
        if (expectation.check(recorded) === false) {
          failure = new Error(`Scripted model "${id}": request #${index} did not match expectNextRequest().`);
        }
      } catch (error) {
        failure = error instanceof Error ? error : new Error(String(error));
      }
      if (failure) {
        expectation.reject(failure);
        throw new ColloquyError(
          'MODEL_ERROR',
          failure.message,
          { provider: id, turn: index },
          { cause: failure },
        );
      }
      expectation.resolve(recorded);
    }

    const signal = request.signal;
    throwIfAborted(signal, id);
    const reply = await resolveStep(recorded, index);
    if (reply.delayMs) await sleep(reply.delayMs, signal, id);
    throwIfAborted(signal, id);

    const pieces = reply.text === undefined ? [] : Array.isArray(reply.text) ? reply.text : [reply.text];
    const calls = reply.toolCalls ?? [];
    let first = true;
    const pace = async () => {
      if (!first && reply.chunkDelayMs) await sleep(reply.chunkDelayMs, signal, id);
      first = false;
      throwIfAborted(signal, id);
    };
    for (const text of pieces) {
      await pace();
      yield { type: 'text-delta', text };
    }
    for (const [i, call] of calls.entries()) {
      await pace();
      yield {
        type: 'tool-call',
        id: call.id ?? `call_${index}_${i}`,
        name: call.name,
        arguments: call.arguments ?? {},
      };
    }
    if (reply.error) {
      throw reply.error instanceof Error
        ? reply.error
        : new ColloquyError(reply.error.code, reply.error.message ?? `Scripted ${reply.error.code}`, {
            provider: id,
            ...reply.error.details,
          });
    }
    yield {
      type: 'finish',
      finishReason: reply.finishReason ?? (calls.length > 0 ? 'tool-calls' : 'stop'),
      usage: usageOf(recorded, pieces, calls, reply.usage),
    };
  }

  return {
    id,
    streamTurn,
    get requests() {
      return requests;
    },
    get lastRequest() {
      return requests[requests.length - 1];
    },
    get callCount() {
      return received;
    },
    get remaining() {
      return fallback ? Number.POSITIVE_INFINITY : queue.length;
    },
    push(...steps) {
      queue.push(...steps);
      scriptedCount += steps.length;
    },
    expectNextRequest(check = () => true) {
      return new Promise((resolve, reject) => expectations.push({ check, resolve, reject }));
    },
    waitForRequests(count, timeoutMs = 5000) {
      return waitForCount(
        requests,
        count,
        timeoutMs,
        waiters,
        (have) => `Scripted model "${id}" got ${have} of ${count} expected requests in ${timeoutMs} ms.`,
        () => received,
      );
    },
    assertDone() {
      if (queue.length > 0) {
        throw new ColloquyError(
          'MODEL_ERROR',
          `Scripted model "${id}" has ${queue.length} unused step(s) after ${requests.length} turn(s); the agent made fewer model calls than scripted.`,
          { provider: id, remaining: queue.length, turns: requests.length },
        );
      }
    },
  };
}

/**
 * The text of the last user message of a request (text blocks joined), for assertions and scripts.
 *
 * @returns the text, or `undefined` when the request has no user message
 */
export function lastUserText(request: Pick<ModelRequest, 'messages'>): string | undefined {
  for (let i = request.messages.length - 1; i >= 0; i--) {
    const message = request.messages[i];
    if (message?.role === 'user') return messageText(message);
  }
  return undefined;
}

/** The text of a model message: its string content or its text blocks joined. */
export function messageText(message: ModelMessage): string {
  if (typeof message.content === 'string') return message.content;
  return message.content
    .map((block) => (block.type === 'text' ? block.text : ''))
    .filter((text) => text.length > 0)
    .join('\n');
}

function usageOf(
  request: ModelRequest,
  pieces: readonly string[],
  calls: readonly ScriptedToolCall[],
  given: Partial<TokenUsage> | undefined,
): TokenUsage {
  let promptChars = request.system.length;
  for (const message of request.messages) promptChars += messageText(message).length;
  let outputChars = 0;
  for (const piece of pieces) outputChars += piece.length;
  for (const call of calls) outputChars += call.name.length + JSON.stringify(call.arguments ?? {}).length;
  const inputTokens = given?.inputTokens ?? Math.ceil(promptChars / 4);
  const outputTokens = given?.outputTokens ?? Math.ceil(outputChars / 4);
  return {
    inputTokens,
    outputTokens,
    totalTokens: given?.totalTokens ?? inputTokens + outputTokens,
    contextTokens: given?.contextTokens ?? inputTokens,
  };
}

function throwIfAborted(signal: AbortSignal | undefined, id: string): void {
  if (signal?.aborted) throw abortedError(signal, id);
}

function abortedError(signal: AbortSignal, id: string): ColloquyError {
  const reason = signal.reason instanceof Error ? signal.reason.message : String(signal.reason ?? 'aborted');
  return new ColloquyError('ABORTED', `Scripted model "${id}": the turn was aborted (${reason}).`, {
    provider: id,
  });
}

function sleep(ms: number, signal: AbortSignal | undefined, id: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      clearTimeout(timer);
      reject(abortedError(signal as AbortSignal, id));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
