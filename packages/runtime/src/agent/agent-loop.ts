import { type AgentTool, ColloquyError, type ContentBlock, type TranscriptMessage } from '@colloquy/core';
import type { TokenUsage } from '@colloquy/core/gateway';
import { addUsage } from '@colloquy/core/internal';
import type { FinishReason, ModelMessage, ModelProvider, ModelStreamEvent } from '@colloquy/core/model';
import type { LoopTrace } from '../telemetry/turn-trace.js';
import { runToolCall, toolSpecs } from './tool-runner.js';
import { ZERO_USAGE } from './usage.js';

/** Input of {@link runAgentLoop}. */
export interface AgentLoopInput {
  provider: ModelProvider;
  /** The provider's model id. */
  modelId: string;
  system: string;
  /** The prompt history (already within the context budget). Extended in place as the loop runs. */
  messages: ModelMessage[];
  tools: readonly AgentTool[];
  /** Model calls at most (`runtime.maxSteps`). */
  maxSteps: number;
  signal: AbortSignal;
  thinking?: string;
  runId: string;
  /** Spans of the model and tool calls. Default: none. */
  trace?: LoopTrace;
  now(): number;
  /** The cost of a usage record (from `models.prices`), or undefined. */
  cost(usage: TokenUsage): number | undefined;
  /** Stores messages of intermediate steps (assistant tool calls and tool results) as they happen. */
  record(messages: TranscriptMessage[]): Promise<void>;
  onDelta?(text: string): void;
  /**
   * Messages injected while the run goes on (a steering message), taken before every model step
   * after the first; they are already stored.
   */
  takeInjected?(): Promise<ModelMessage[]>;
  onToolCall?(toolName: string, toolCallId: string): void;
}

/**
 * How the loop ended. `max-steps`: the model still wanted tools when the step budget ran out;
 * `yielded`: a tool ended the turn (`endTurn`, e.g. sessions_yield), so no model step followed it.
 */
export interface AgentLoopResult {
  status: 'final' | 'max-steps' | 'yielded';
  /** The final assistant message, NOT stored yet: the caller commits it together with the run's end. */
  finalMessage?: TranscriptMessage;
  /** The text of the last assistant message. */
  reply: string;
  usage: TokenUsage;
  costUsd?: number;
  steps: number;
}

interface StepOutput {
  text: string;
  calls: { id: string; name: string; arguments: unknown }[];
  usage: TokenUsage;
}

/**
 * Runs model turns until the model answers without tool calls or `maxSteps` is reached. Tool calls
 * are validated and executed in order (see `runToolCall`); every assistant message and tool result
 * of an intermediate step is recorded through `record` before the next model call.
 *
 * @param input - model, prompt, tools and callbacks
 * @returns the final message (unstored), the reply text and the summed usage
 * @throws the signal's reason (`ABORTED`/`TIMEOUT`) when aborted; `MODEL_ERROR` and friends from
 *   the provider
 */
export async function runAgentLoop(input: AgentLoopInput): Promise<AgentLoopResult> {
  const specs = toolSpecs(input.tools);
  let usage: TokenUsage = { ...ZERO_USAGE };
  let costUsd: number | undefined;
  let reply = '';
  for (let step = 1; ; step++) {
    throwIfAborted(input.signal);
    if (step > 1 && input.takeInjected) input.messages.push(...(await input.takeInjected()));
    const out = await streamStep(input, specs);
    const stepUsage: TokenUsage = { ...out.usage, contextTokens: out.usage.inputTokens };
    usage = addUsage(usage, stepUsage);
    const stepCost = input.cost(out.usage);
    if (stepCost !== undefined) costUsd = (costUsd ?? 0) + stepCost;
    reply = out.text;
    const content = contentOf(out);
    const assistant: TranscriptMessage = {
      role: 'assistant',
      content,
      timestamp: input.now(),
      runId: input.runId,
      usage: stepUsage,
      ...(stepCost !== undefined ? { cost: stepCost } : {}),
    };
    if (out.calls.length === 0) {
      return { status: 'final', finalMessage: assistant, reply, usage, ...cost(costUsd), steps: step };
    }
    input.messages.push({ role: 'assistant', content });
    if (step >= input.maxSteps) {
      const skipped = out.calls.map((call) =>
        toolResultMessage(input, call, {
          text: JSON.stringify({
            status: 'error',
            error: `Not run: the run reached its step limit (runtime.maxSteps = ${input.maxSteps}).`,
          }),
          isError: true,
        }),
      );
      await input.record([assistant, ...skipped]);
      return { status: 'max-steps', reply, usage, ...cost(costUsd), steps: step };
    }
    await input.record([assistant]);
    let endTurn = false;
    for (const call of out.calls) {
      throwIfAborted(input.signal);
      input.onToolCall?.(call.name, call.id);
      const running = input.trace
        ? input.trace.toolCall(call, () => runToolCall(input.tools, call, input.signal))
        : runToolCall(input.tools, call, input.signal);
      const outcome = await raceAbort(running, input.signal);
      const message = toolResultMessage(input, call, outcome);
      await input.record([message]);
      input.messages.push({
        role: 'toolResult',
        toolCallId: call.id,
        toolName: call.name,
        content: outcome.text,
        ...(outcome.isError ? { isError: true } : {}),
      });
      if (outcome.endTurn) endTurn = true;
    }
    if (endTurn) return { status: 'yielded', reply, usage, ...cost(costUsd), steps: step };
  }
}

function cost(costUsd: number | undefined): { costUsd?: number } {
  return costUsd === undefined ? {} : { costUsd };
}

function contentOf(out: StepOutput): string | ContentBlock[] {
  if (out.calls.length === 0) return out.text;
  const blocks: ContentBlock[] = [];
  if (out.text) blocks.push({ type: 'text', text: out.text });
  for (const call of out.calls) {
    blocks.push({ type: 'toolCall', id: call.id, name: call.name, arguments: call.arguments });
  }
  return blocks;
}

function toolResultMessage(
  input: AgentLoopInput,
  call: { id: string; name: string },
  outcome: { text: string; isError: boolean },
): TranscriptMessage {
  return {
    role: 'toolResult',
    content: outcome.text,
    timestamp: input.now(),
    runId: input.runId,
    toolCallId: call.id,
    toolName: call.name,
    ...(outcome.isError ? { isError: true } : {}),
  };
}

async function streamStep(input: AgentLoopInput, specs: ReturnType<typeof toolSpecs>): Promise<StepOutput> {
  const stream = input.provider.streamTurn({
    model: input.modelId,
    system: input.system,
    messages: input.messages,
    tools: specs,
    signal: input.signal,
    ...(input.thinking ? { thinking: input.thinking } : {}),
  });
  const iterator = stream[Symbol.asyncIterator]();
  let text = '';
  const calls: StepOutput['calls'] = [];
  let usage: TokenUsage | undefined;
  let finishReason: FinishReason | undefined;
  const traced = input.trace?.modelCall({
    provider: input.provider.id,
    model: input.modelId,
    system: input.system,
    messages: input.messages,
  });
  try {
    for (;;) {
      const next: IteratorResult<ModelStreamEvent> = await raceAbort(iterator.next(), input.signal);
      if (next.done) break;
      const event = next.value;
      if (event.type === 'text-delta' || event.type === 'tool-call') traced?.firstChunk();
      if (event.type === 'text-delta') {
        text += event.text;
        input.onDelta?.(event.text);
      } else if (event.type === 'tool-call') {
        calls.push({ id: event.id, name: event.name, arguments: event.arguments });
      } else if (event.type === 'finish') {
        usage = event.usage;
        finishReason = event.finishReason;
        if (event.finishReason === 'error') {
          throw new ColloquyError('MODEL_ERROR', 'The model ended its turn with an error. Try again.');
        }
      }
    }
  } catch (error) {
    traced?.end(undefined, error);
    throw error;
  } finally {
    if (input.signal.aborted) void iterator.return?.()?.catch(() => {});
  }
  const out = { text, calls, usage: usage ?? { ...ZERO_USAGE } };
  traced?.end({ ...out, ...(finishReason ? { finishReason } : {}) });
  return out;
}

function throwIfAborted(signal: AbortSignal): void {
  if (signal.aborted) throw signal.reason;
}

/** Resolves with `promise`, or rejects with the signal's reason as soon as it aborts. */
function raceAbort<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}
