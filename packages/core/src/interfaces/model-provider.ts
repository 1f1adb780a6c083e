import type { ContentBlock, TokenUsage } from './records.js';

/** A tool as the model sees it. `parameters` is JSON Schema (TypeBox schemas are). */
export interface ModelToolSpec {
  /** The tool name the model calls. */
  name: string;
  /** What the tool does, for the model. */
  description: string;
  /** The tool's parameters as JSON Schema. */
  parameters: Record<string, unknown>;
}

/** A message in a model request. */
export type ModelMessage =
  | { role: 'user'; content: string | ContentBlock[] }
  | { role: 'assistant'; content: string | ContentBlock[] }
  | { role: 'toolResult'; toolCallId: string; toolName: string; content: string; isError?: boolean };

/** One model turn request. */
export interface ModelRequest {
  /** The model id within the provider (without the `provider/` prefix). */
  model: string;
  /** The system prompt. */
  system: string;
  /** The conversation, oldest first. */
  messages: ModelMessage[];
  /** The tools the model may call; empty for none. */
  tools: ModelToolSpec[];
  /**
   * The session's thinking level (`off`, `minimal`, `low`, `medium`, `high`); absent means the provider's
   * default.
   */
  thinking?: string;
  /** A cap on generated tokens; absent means the provider's default. */
  maxOutputTokens?: number;
  /** Aborts the turn; the provider then throws `ABORTED`. */
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
  /** The provider id, the `provider` of `provider/model` references. */
  readonly id: string;
  /** Streams one model turn. */
  streamTurn(request: ModelRequest): AsyncIterable<ModelStreamEvent>;
}
