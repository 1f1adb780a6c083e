import type { AgentTool, ToolResult } from '@colloquy/core';
import type { ModelToolSpec } from '@colloquy/core/model';
import type { TSchema } from '@sinclair/typebox';
import { type TypeCheck, TypeCompiler } from '@sinclair/typebox/compiler';
import { Value } from '@sinclair/typebox/value';

/** The outcome of one tool call, ready for the transcript. */
export interface ToolCallOutcome {
  /** The text the model sees. */
  text: string;
  isError: boolean;
  /** The tool ended the turn (`ToolResult.endTurn`, e.g. sessions_yield): no further model step. */
  endTurn?: boolean;
}

const compiled = new WeakMap<TSchema, TypeCheck<TSchema>>();

function checkerFor(schema: TSchema): TypeCheck<TSchema> {
  let check = compiled.get(schema);
  if (!check) {
    check = TypeCompiler.Compile(schema);
    compiled.set(schema, check);
  }
  return check;
}

/** At most this many argument problems are listed back to the model. */
const MAX_LISTED_ERRORS = 8;

/**
 * The tool list as the model sees it (name, description, JSON Schema).
 *
 * @param tools - the run's tools
 * @returns specs for the model request
 */
export function toolSpecs(tools: readonly AgentTool[]): ModelToolSpec[] {
  return tools.map((tool) => ({
    name: tool.name,
    description: tool.description,
    parameters: tool.parameters as unknown as Record<string, unknown>,
  }));
}

/**
 * Validates a tool call's arguments against the tool's TypeBox schema (after filling schema
 * defaults) and runs it. Never throws: an unknown tool, invalid arguments (each bad path named),
 * a tool that throws, or an abort all become an error result the model can read and act on.
 *
 * @param tools - the run's tools
 * @param call - the model's tool call
 * @param signal - the run's signal, passed to the tool
 * @returns the text for the `toolResult` message and whether it is an error
 */
export async function runToolCall(
  tools: readonly AgentTool[],
  call: { id: string; name: string; arguments: unknown },
  signal?: AbortSignal,
): Promise<ToolCallOutcome> {
  const tool = tools.find((t) => t.name === call.name);
  if (!tool) {
    const names = tools.map((t) => t.name).join(', ') || 'none';
    return errorOutcome(`Unknown tool "${call.name}". Available tools: ${names}.`);
  }
  let args: unknown = call.arguments ?? {};
  if (typeof args === 'string') {
    try {
      args = JSON.parse(args);
    } catch {
      return errorOutcome(`Invalid arguments for ${tool.name}: not valid JSON. Send a JSON object.`);
    }
  }
  const check = checkerFor(tool.parameters);
  args = Value.Default(tool.parameters, Value.Clone(args));
  if (!check.Check(args)) {
    const problems: string[] = [];
    for (const error of check.Errors(args)) {
      if (problems.length >= MAX_LISTED_ERRORS) break;
      const line = `${error.path || '/'}: ${error.message}`;
      if (!problems.includes(line)) problems.push(line);
    }
    return errorOutcome(
      `Invalid arguments for ${tool.name}: ${problems.join('; ')}. Fix these fields and call ${tool.name} again.`,
      { paths: problems.map((p) => p.slice(0, p.indexOf(':'))) },
    );
  }
  try {
    const result: ToolResult = await tool.execute(call.id, args as never, signal);
    const text = result.content?.[0]?.text ?? JSON.stringify(result.details ?? null);
    const isError = result.isError === true;
    return { text, isError, ...(result.endTurn === true && !isError ? { endTurn: true } : {}) };
  } catch (error) {
    if (signal?.aborted) return errorOutcome(`${tool.name} was stopped because the run was aborted.`);
    const message = error instanceof Error ? error.message : String(error);
    return errorOutcome(`${tool.name} failed: ${message}`);
  }
}

function errorOutcome(error: string, extra: Record<string, unknown> = {}): ToolCallOutcome {
  return { text: JSON.stringify({ status: 'error', error, ...extra }, null, 2), isError: true };
}
