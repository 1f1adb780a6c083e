/**
 * The `mcp` section: the MCP servers whose tools the agents may use (each agent's
 * `agents.list[].tools.allow` says which). A server is stdio (`command`, `args`, `env`, `cwd`) or
 * Streamable HTTP (`url`, `headers`, `bearerTokenEnv`).
 */
import { type Static, Type } from '@sinclair/typebox';

const Strict = { additionalProperties: false } as const;
const Seconds = (defaultValue: number) => Type.Integer({ minimum: 1, maximum: 3600, default: defaultValue });

/** One entry of `mcp.servers`. */
export const McpServerEntrySchema = Type.Object(
  {
    command: Type.Optional(
      Type.String({ minLength: 1, description: 'stdio: the program that runs the server, e.g. "npx".' }),
    ),
    args: Type.Optional(Type.Array(Type.String(), { description: 'stdio: its arguments.' })),
    env: Type.Optional(
      Type.Record(Type.String(), Type.String(), {
        description: "stdio: environment variables for it (the bot's own environment is not passed on).",
      }),
    ),
    cwd: Type.Optional(Type.String({ minLength: 1, description: 'stdio: its working directory.' })),
    url: Type.Optional(
      Type.String({
        pattern: '^https?://',
        'x-expected': 'an http:// or https:// URL of the MCP endpoint',
        description: 'Streamable HTTP: the MCP endpoint, e.g. "https://mcp.example.com/mcp".',
      }),
    ),
    headers: Type.Optional(
      Type.Record(Type.String(), Type.String(), { description: 'Streamable HTTP: extra request headers.' }),
    ),
    bearerTokenEnv: Type.Optional(
      Type.String({
        pattern: '^[A-Za-z_][A-Za-z0-9_]*$',
        'x-expected': 'the name of an environment variable',
        description:
          'Streamable HTTP: the environment variable holding a token sent as "Authorization: Bearer".',
      }),
    ),
    callTimeoutSeconds: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 3600,
        description: 'Overrides mcp.callTimeoutSeconds for this server.',
      }),
    ),
  },
  Strict,
);

/** The `mcp` section. */
export const McpSectionSchema = Type.Object(
  {
    servers: Type.Record(Type.String(), McpServerEntrySchema, { default: {} }),
    callTimeoutSeconds: Seconds(60),
    startTimeoutSeconds: Seconds(30),
    maxResultChars: Type.Integer({ minimum: 1000, maximum: 10_000_000, default: 100_000 }),
  },
  { ...Strict, default: {} },
);

/** The resolved `mcp` section. */
export type McpSection = Static<typeof McpSectionSchema>;

/** One resolved entry of `mcp.servers`. */
export type McpServerEntry = Static<typeof McpServerEntrySchema>;
