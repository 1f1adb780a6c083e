/**
 * Checking the `mcp` section beyond its schema (a server is either stdio or HTTP, its token variable
 * is set, agents allow tools of servers that exist), and turning it into the runtime's MCP options.
 */
import type { ColloquyConfig, ConfigIssue } from '@colloquy/core';
import { checkSection, describeConfigValue, type SectionCheck } from '@colloquy/core/internal';
import { MCP_SERVER_NAME_PATTERN, type McpServerConfig, type McpToolSourceOptions } from '@colloquy/runtime';
import type { Env } from './env-overlay.js';
import { type McpSection, McpSectionSchema, type McpServerEntry } from './mcp-schema.js';

const STDIO_ONLY = ['args', 'env', 'cwd'] as const;
const HTTP_ONLY = ['headers', 'bearerTokenEnv'] as const;

/**
 * Validates the `mcp` section: its schema, then each server's name and kind (exactly one of `command`
 * and `url`, no setting of the other kind) and that its `bearerTokenEnv` names a set variable.
 *
 * @param input - the raw `mcp` section
 * @param env - the environment `bearerTokenEnv` is read from
 * @returns the resolved section, or every issue (`path`, `expected`, `got`)
 */
export function checkMcpSection(input: unknown, env: Env): SectionCheck<McpSection> {
  return checkSection(McpSectionSchema, input, {
    path: 'mcp',
    check: (section) =>
      Object.entries(section.servers).flatMap(([name, server]) => serverIssues(name, server, env)),
  });
}

function serverIssues(name: string, server: McpServerEntry, env: Env): ConfigIssue[] {
  const path = `mcp.servers.${name}`;
  const issues: ConfigIssue[] = [];
  if (!MCP_SERVER_NAME_PATTERN.test(name)) {
    issues.push({
      path,
      expected:
        'a server name of lower-case letters, digits, "-" and single "_" (tools are named <server>__<tool>)',
      got: describeConfigValue('', name),
    });
  }
  if ((server.command === undefined) === (server.url === undefined)) {
    issues.push({
      path,
      expected: 'either "command" (a stdio server) or "url" (a Streamable HTTP server)',
      got: server.command === undefined ? 'neither' : 'both',
    });
    return issues;
  }
  const [kind, foreign] = server.command !== undefined ? ['a stdio', HTTP_ONLY] : ['an HTTP', STDIO_ONLY];
  for (const key of foreign) {
    if (server[key] !== undefined) {
      issues.push({
        path: `${path}.${key}`,
        expected: `no "${key}" on ${kind} server (it has "${server.command !== undefined ? 'command' : 'url'}")`,
        got: 'a value',
      });
    }
  }
  if (server.bearerTokenEnv !== undefined && !env[server.bearerTokenEnv]?.trim()) {
    issues.push({
      path: `${path}.bearerTokenEnv`,
      expected: `the name of a set environment variable (export ${server.bearerTokenEnv}=<token>)`,
      got: `${server.bearerTokenEnv} (not set)`,
    });
  }
  return issues;
}

/**
 * The allow-list entries that name a server `mcp.servers` does not have (a pattern starting with
 * `*` can match any server and is never reported).
 *
 * @param core - the resolved core config
 * @param mcp - the resolved `mcp` section
 * @returns one issue per such entry, at `agents.list[i].tools.allow[j]`
 */
export function mcpAllowIssues(core: ColloquyConfig, mcp: McpSection): ConfigIssue[] {
  const servers = Object.keys(mcp.servers);
  const issues: ConfigIssue[] = [];
  core.agents.list.forEach((agent, i) => {
    (agent.tools?.allow ?? []).forEach((pattern, j) => {
      const separator = pattern.indexOf('__');
      const star = pattern.indexOf('*');
      if (star >= 0 && (separator < 0 || star < separator)) return;
      const server = separator < 0 ? pattern : pattern.slice(0, separator);
      if (servers.includes(server) && separator >= 0) return;
      issues.push({
        path: `agents.list[${i}].tools.allow[${j}]`,
        expected: `<server>__<tool> or <server>__* naming a server of mcp.servers (${servers.join(', ') || 'none configured'})`,
        got: describeConfigValue('', pattern),
      });
    });
  });
  return issues;
}

/**
 * The runtime's MCP options for the resolved section.
 *
 * @param mcp - the resolved `mcp` section
 * @param env - the environment holding the bearer tokens
 * @returns the options of `createMcpToolSource`, without logger and secrets
 */
export function mcpToolSourceOptions(mcp: McpSection, env: Env): McpToolSourceOptions {
  const servers: Record<string, McpServerConfig> = {};
  for (const [name, server] of Object.entries(mcp.servers)) {
    const timeout =
      server.callTimeoutSeconds === undefined ? {} : { callTimeoutMs: server.callTimeoutSeconds * 1000 };
    if (server.command !== undefined) {
      servers[name] = {
        command: server.command,
        ...(server.args ? { args: server.args } : {}),
        ...(server.env ? { env: server.env } : {}),
        ...(server.cwd ? { cwd: server.cwd } : {}),
        ...timeout,
      };
    } else {
      const token = server.bearerTokenEnv ? env[server.bearerTokenEnv]?.trim() : undefined;
      servers[name] = {
        url: server.url!,
        ...(server.headers ? { headers: server.headers } : {}),
        ...(token ? { bearerToken: token } : {}),
        ...timeout,
      };
    }
  }
  return {
    servers,
    callTimeoutMs: mcp.callTimeoutSeconds * 1000,
    startTimeoutMs: mcp.startTimeoutSeconds * 1000,
    maxResultChars: mcp.maxResultChars,
  };
}
