import type { Static, TSchema } from '@sinclair/typebox';

/** What a tool returns: the JSON as text for the model, and the same object as `details`. */
export interface ToolResult<T = unknown> {
  /** The JSON of `details` as text, for the model. */
  content: [{ type: 'text'; text: string }];
  /** The result object. */
  details: T;
  /** True when the tool failed; the model sees the result as an error. */
  isError?: boolean;
  /**
   * Ends the caller's turn after this tool call: the agent loop runs no further model step
   * (`sessions_yield` sets it). Default false.
   */
  endTurn?: boolean;
}

/**
 * A model-callable tool. `parameters` is a TypeBox schema: JSON Schema for the model, and
 * validated at run time. Tools never throw for a user or model mistake: they return
 * `{ status: "error" | "forbidden", error }`.
 */
export interface AgentTool<P extends TSchema = TSchema, R = unknown> {
  /** The tool name the model calls. */
  name: string;
  /** What the tool does, for the model. */
  description: string;
  /** The arguments schema. */
  parameters: P;
  /** Runs the tool with validated arguments; `signal` aborts with the run. */
  execute(toolCallId: string, args: Static<P>, signal?: AbortSignal): Promise<ToolResult<R>>;
}

/** Builds a tool result from a JSON-serialisable object. */
export function toolResult<T>(details: T, isError = false): ToolResult<T> {
  return {
    content: [{ type: 'text', text: JSON.stringify(details, null, 2) }],
    details,
    ...(isError ? { isError } : {}),
  };
}
