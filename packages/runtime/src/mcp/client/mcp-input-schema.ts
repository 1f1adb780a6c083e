/**
 * An MCP tool's input schema as an agent tool's parameters: the server's JSON Schema, shown to the
 * model unchanged, under a TypeBox kind of its own so the tool runner can compile it. The runner
 * checks only that the arguments are an object; the server validates them against its schema and
 * answers a mismatch with a tool error the model can read.
 */
import { Kind, type TSchema, Type, TypeRegistry } from '@sinclair/typebox';

const MCP_INPUT_KIND = 'ColloquyMcpInput';

if (!TypeRegistry.Has(MCP_INPUT_KIND)) {
  TypeRegistry.Set(
    MCP_INPUT_KIND,
    (_schema, value) => typeof value === 'object' && value !== null && !Array.isArray(value),
  );
}

/**
 * The parameters of an agent tool for an MCP tool's `inputSchema`.
 *
 * @param inputSchema - the JSON Schema the server lists (an object schema)
 * @returns a TypeBox schema whose JSON is the server's schema (with `properties` filled in when absent)
 */
export function mcpInputSchema(inputSchema: Record<string, unknown> | undefined): TSchema {
  return Type.Unsafe<Record<string, unknown>>({
    type: 'object',
    properties: {},
    ...inputSchema,
    [Kind]: MCP_INPUT_KIND,
  });
}
