import {
  type AgentTool,
  type ColloquyConfig,
  createSessionTools,
  type Gateway,
  type ToolResult,
  toolResult,
} from '@colloquy/core';
import type { GatewayMethod, GatewayParams, McpScope } from '@colloquy/core/gateway';
import { effectiveMcpVisibility, mcpClientSessionKey } from '@colloquy/core/internal';
import {
  type CallToolResult,
  fromJsonSchema,
  type JsonSchemaType,
  McpServer,
  type ScopeChallengeHandler,
} from '@modelcontextprotocol/server';
import { RUNTIME_VERSION } from '../../runtime/package-version.js';
import { registerEventsResource } from './events-resource.js';
import { createEventsWaitTool } from './events-wait-tool.js';
import {
  MCP_TOOL_SCOPES,
  type McpClientIdentity,
  type McpToolName,
  scopeForCall,
} from './mcp-client-identity.js';

/** Options of {@link createMcpToolServer}. */
export interface McpToolServerOptions {
  /** The gateway the tools call (in-process, or the WebSocket client of a running bot). */
  gateway: Gateway;
  /** The bot's resolved config (visibility, send policy, agent-to-agent rules, limits). */
  config: ColloquyConfig;
  /** Who is calling. */
  client: McpClientIdentity;
  /** The version the server reports to clients. Default: the runtime's own version. */
  version?: string;
  /** Receives background work the tools start (agent-to-agent steps), for shutdown. */
  track?: (work: Promise<void>) => void;
  /**
   * Advertise subscriptions to `colloquy://events` (the stdio server, whose connection stays open
   * to carry the notifications). Default false.
   */
  eventSubscriptions?: boolean;
}

/**
 * Builds the MCP server of one client: the session tools of `@colloquy/core` (exactly what a
 * model's tools call, so visibility, send policy, agent-to-agent rules, spawn depth and concurrency
 * apply unchanged) with the client acting as the session `agent:<agentId>:mcp:<name>`, plus
 * `events_wait`. Each tool needs its scope; over HTTP a missing one is answered `403
 * insufficient_scope` before the tool runs. A `params._meta.traceparent` is kept on the runs a
 * call starts.
 *
 * @param options - gateway, config and the client
 * @returns a fresh server (build one per HTTP request, or one per stdio connection)
 */
export function createMcpToolServer(options: McpToolServerOptions): McpServer {
  const { gateway, config, client } = options;
  const requesterKey = mcpClientSessionKey(client.agentId, client.name);
  const scoped: ColloquyConfig = {
    ...config,
    tools: {
      ...config.tools,
      sessions: {
        ...config.tools.sessions,
        visibility: effectiveMcpVisibility(client.visibility, config.tools.sessions.visibility),
      },
    },
  };
  const toolsFor = (via: Gateway): Map<string, AgentTool> =>
    new Map(
      [
        ...createSessionTools({
          requesterKey,
          agentId: client.agentId,
          config: scoped,
          gateway: via,
          ...(options.track ? { track: options.track } : {}),
        }),
        createEventsWaitTool(via, requesterKey) as unknown as AgentTool,
      ].map((tool) => [tool.name, tool]),
    );
  const listed = toolsFor(gateway);
  const server = new McpServer(
    { name: 'colloquy', version: options.version ?? RUNTIME_VERSION },
    { capabilities: { tools: {}, resources: { subscribe: options.eventSubscriptions === true } } },
  );
  let opened: Promise<unknown> | undefined;
  const open = (): Promise<unknown> =>
    (opened ??= gateway.call('mcp.open', { agentId: client.agentId, name: client.name }));
  registerEventsResource(server, gateway, requesterKey, open, scopeChallengeFor('events_wait'));
  for (const name of Object.keys(MCP_TOOL_SCOPES) as McpToolName[]) {
    const tool = listed.get(name)!;
    server.registerTool(
      name,
      {
        description: tool.description,
        inputSchema: inputSchemaOf(tool.parameters),
        scopeChallenge: scopeChallengeFor(name),
      },
      async (args: unknown, ctx): Promise<CallToolResult> => {
        const needed = scopeForCall(name, args);
        if (!client.scopes.includes(needed)) return toMcpResult(missingScope(name, needed));
        await open();
        const meta = ctx.mcpReq._meta as Record<string, unknown> | undefined;
        const via = tracedGateway(gateway, meta);
        const run = (via === gateway ? listed : toolsFor(via)).get(name)!;
        return toMcpResult(await run.execute(String(ctx.mcpReq.id), args as never));
      },
    );
  }
  return server;
}

/** The HTTP-level check: a token without the call's scope gets `403 insufficient_scope` naming what it needs. */
function scopeChallengeFor(name: McpToolName): ScopeChallengeHandler {
  return ({ request, authInfo }) => {
    if (!authInfo) return undefined;
    const args = (request.params as { arguments?: unknown } | undefined)?.arguments;
    const needed = scopeForCall(name, args);
    if (authInfo.scopes.includes(needed)) return undefined;
    return {
      scopes: [...new Set([...authInfo.scopes, needed])] as [string, ...string[]],
      errorDescription: `${name} needs the ${needed} scope`,
    };
  };
}

function missingScope(name: string, scope: McpScope): ToolResult {
  return toolResult(
    {
      status: 'forbidden',
      error: `This client's token lacks the "${scope}" scope that ${name} needs; create a token with it (colloquy mcp token create --scopes ...).`,
    },
    true,
  );
}

function toMcpResult(result: ToolResult): CallToolResult {
  return {
    content: result.content,
    ...(isRecord(result.details) ? { structuredContent: result.details } : {}),
    ...(result.isError ? { isError: true } : {}),
  };
}

/** A gateway whose `agent` calls carry the request's W3C trace context, so the runs keep it. */
function tracedGateway(gateway: Gateway, meta: Record<string, unknown> | undefined): Gateway {
  const traceparent = meta?.traceparent;
  if (typeof traceparent !== 'string') return gateway;
  const tracestate = typeof meta?.tracestate === 'string' ? meta.tracestate : undefined;
  return {
    call<M extends GatewayMethod>(method: M, params: GatewayParams<M>) {
      if (method !== 'agent') return gateway.call(method, params);
      const traced = {
        ...(params as GatewayParams<'agent'>),
        traceparent,
        ...(tracestate ? { tracestate } : {}),
      };
      return gateway.call(method, traced as GatewayParams<M>);
    },
    ...(gateway.subscribe ? { subscribe: gateway.subscribe.bind(gateway) } : {}),
  };
}

const inputSchemas = new WeakMap<object, ReturnType<typeof fromJsonSchema>>();

/**
 * A tool's TypeBox schema as the SDK's input schema: plain JSON (no symbol keys), wrapped once per
 * schema object, since a server is built per request and the tools' schemas do not change.
 */
function inputSchemaOf(schema: object): ReturnType<typeof fromJsonSchema> {
  let wrapped = inputSchemas.get(schema);
  if (!wrapped) {
    wrapped = fromJsonSchema(JSON.parse(JSON.stringify(schema)) as JsonSchemaType);
    inputSchemas.set(schema, wrapped);
  }
  return wrapped;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
