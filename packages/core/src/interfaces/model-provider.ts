import type { ContentBlock, TokenUsage } from './records.js';

/** A tool as the model sees it. `parameters` is JSON Schema (TypeBox schemas are). */
export interface ModelToolSpec {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
}

/** A message in a model request. */
export type ModelMessage =
  | { role: 'user'; content: string | ContentBlock[] }
  | { role: 'assistant'; content: string | ContentBlock[] }
  | { role: 'toolResult'; toolCallId: string; toolName: string; content: string; isError?: boolean };

/** One model turn request. */
export interface ModelRequest {
  model: string;
  system: string;
  messages: ModelMessage[];
  tools: ModelToolSpec[];
  thinking?: string;
  maxOutputTokens?: number;
  signal?: AbortSignal;
}

/** Why a turn ended. */
export type FinishReason = 'stop' | 'tool-calls' | 'length' | 'content-filter' | 'error' | 'other';

/** Streamed events of one turn; the last is always `finish`. */
export type ModelStreamEvent =
  | { type: 'text-delta'; text: string }
  | { type: 'tool-call'; id: string; name: string; arguments: unknown }
  | { type: 'finish'; finishReason: FinishReason; usage: TokenUsage };

/**
 * A language model. One call streams one turn with its tool calls.
 * Failures throw `ColloquyError` `MODEL_ERROR` (or `RATE_LIMITED` with `details.retryAfterMs`,
 * `TIMEOUT`, `ABORTED`).
 */
export interface ModelProvider {
  readonly id: string;
  streamTurn(request: ModelRequest): AsyncIterable<ModelStreamEvent>;
}
