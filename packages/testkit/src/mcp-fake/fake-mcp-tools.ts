/**
 * The tools of the fake MCP server, and the tool book that keeps them: the built-in tools every
 * fake serves (an echo and the fault modes), tools a test adds, and the servers built from them.
 * Changing the book re-registers the tools on every live server instance, which sends
 * `notifications/tools/list_changed` to its client.
 */
import { fromJsonSchema, McpServer, type RegisteredTool } from '@modelcontextprotocol/server';

/** What a fake tool returns: text, or text marked as a tool error. */
export interface FakeMcpToolResult {
  /** The text content of the result. */
  text: string;
  /** Marks the result as a tool error (`isError: true`). Default false. */
  isError?: boolean;
}

/** A tool a test adds to the fake MCP server. */
export interface FakeMcpTool {
  /** The tool name, as the server lists it. */
  name: string;
  /** Its description. Default: `Fake tool <name>.` */
  description?: string;
  /** The JSON Schema of its arguments. Default: an object with any properties. */
  inputSchema?: Record<string, unknown>;
  /** Answers a call. Default: `<name> ran with <arguments as JSON>`. */
  run?(args: Record<string, unknown>): FakeMcpToolResult | Promise<FakeMcpToolResult>;
}

/** One call the fake served (built-in tools included). */
export interface FakeMcpCall {
  /** The tool name. */
  tool: string;
  /** The arguments it got. */
  arguments: Record<string, unknown>;
}

/** The size of the `big` tool's result when the call names none: 10 MiB. */
export const FAKE_MCP_BIG_RESULT_BYTES = 10 * 1024 * 1024;

const ANY_OBJECT = { type: 'object', additionalProperties: true } as const;

/** How a host (stdio process, HTTP server) ends itself when the `crash` tool is called. */
export type CrashHost = () => void;

/**
 * The tool book: the live tool set of one fake server, shared by every server instance built from
 * it (one per HTTP request, one per stdio connection).
 */
export class FakeMcpToolBook {
  readonly calls: FakeMcpCall[] = [];
  private readonly added = new Map<string, FakeMcpTool>();
  private readonly removed = new Set<string>();
  private readonly live = new Map<McpServer, Map<string, RegisteredTool>>();
  private readonly listeners = new Set<() => void>();

  constructor(
    private readonly name: string,
    private readonly crash: CrashHost,
    tools: readonly FakeMcpTool[] = [],
  ) {
    for (const tool of tools) this.added.set(tool.name, tool);
  }

  /** Adds (or replaces) a tool and tells the clients their list changed. */
  addTool(tool: FakeMcpTool): void {
    this.removed.delete(tool.name);
    this.added.set(tool.name, tool);
    this.changed();
  }

  /** Removes a tool (a built-in one too) and tells the clients their list changed. */
  removeTool(name: string): void {
    this.added.delete(name);
    this.removed.add(name);
    this.changed();
  }

  /** Called after each change of the tool set (the HTTP host publishes it to open subscriptions). */
  onChange(listener: () => void): void {
    this.listeners.add(listener);
  }

  /** The names of the tools served now. */
  toolNames(): string[] {
    return this.tools().map((tool) => tool.name);
  }

  /** Builds a server instance serving the current tools, kept in step with later changes. */
  buildServer(): McpServer {
    const server = new McpServer(
      { name: this.name, version: '1.0.0' },
      { capabilities: { tools: { listChanged: true } } },
    );
    const handles = new Map<string, RegisteredTool>();
    for (const tool of this.tools()) handles.set(tool.name, this.register(server, tool));
    this.live.set(server, handles);
    server.server.onclose = () => this.live.delete(server);
    return server;
  }

  private changed(): void {
    const wanted = new Map(this.tools().map((tool) => [tool.name, tool]));
    for (const [server, handles] of this.live) {
      for (const [name, handle] of handles) {
        handle.remove();
        handles.delete(name);
      }
      for (const tool of wanted.values()) handles.set(tool.name, this.register(server, tool));
    }
    for (const listener of this.listeners) listener();
  }

  private tools(): FakeMcpTool[] {
    const builtIn = builtInTools(this, this.crash).filter((tool) => !this.removed.has(tool.name));
    return [...builtIn.filter((tool) => !this.added.has(tool.name)), ...this.added.values()];
  }

  private register(server: McpServer, tool: FakeMcpTool): RegisteredTool {
    return server.registerTool(
      tool.name,
      {
        description: tool.description ?? `Fake tool ${tool.name}.`,
        inputSchema: fromJsonSchema<Record<string, unknown>>(tool.inputSchema ?? ANY_OBJECT),
      },
      async (args) => {
        const input = (args ?? {}) as Record<string, unknown>;
        this.calls.push({ tool: tool.name, arguments: input });
        const result = tool.run
          ? await tool.run(input)
          : { text: `${tool.name} ran with ${JSON.stringify(input)}` };
        return {
          content: [{ type: 'text', text: result.text }],
          ...(result.isError ? { isError: true } : {}),
        };
      },
    );
  }
}

/** The tools every fake serves: `echo` and the fault modes `crash`, `hang`, `big`, `fail`, `add_tool`, `remove_tool`. */
function builtInTools(book: FakeMcpToolBook, crash: CrashHost): FakeMcpTool[] {
  return [
    {
      name: 'echo',
      description: 'Returns the text it is given.',
      inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
      run: (args) => ({ text: String(args.text) }),
    },
    {
      name: 'crash',
      description:
        'Ends the server in the middle of the call (the process exits; over HTTP every connection drops).',
      inputSchema: ANY_OBJECT,
      run: () => {
        crash();
        return new Promise<never>(() => {});
      },
    },
    {
      name: 'hang',
      description: 'Never answers.',
      inputSchema: ANY_OBJECT,
      run: () => new Promise<never>(() => {}),
    },
    {
      name: 'big',
      description: 'Returns a text of `bytes` bytes (default 10 MiB).',
      inputSchema: { type: 'object', properties: { bytes: { type: 'integer', minimum: 0 } } },
      run: (args) => ({
        text: 'x'.repeat(typeof args.bytes === 'number' ? args.bytes : FAKE_MCP_BIG_RESULT_BYTES),
      }),
    },
    {
      name: 'fail',
      description: 'Returns a tool error with `message`.',
      inputSchema: { type: 'object', properties: { message: { type: 'string' } } },
      run: (args) => ({ text: String(args.message ?? 'the fake tool failed'), isError: true }),
    },
    {
      name: 'add_tool',
      description: 'Adds a tool named `name` that answers "<name> ran", and announces the new tool list.',
      inputSchema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
      run: (args) => {
        const name = String(args.name);
        book.addTool({ name, run: () => ({ text: `${name} ran` }) });
        return { text: `added ${name}` };
      },
    },
    {
      name: 'remove_tool',
      description: 'Removes the tool named `name`, and announces the new tool list.',
      inputSchema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
      run: (args) => {
        book.removeTool(String(args.name));
        return { text: `removed ${String(args.name)}` };
      },
    },
  ];
}
