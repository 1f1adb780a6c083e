import { ColloquyError, formatIssues, type SessionVisibility, silentLogger } from '@colloquy/core';
import { issueMcpToken, type McpTokenRecord, mcpTokenStore, parseMcpScopes } from '@colloquy/core/gateway';
import { agentConfigFor, defaultAgentId, effectiveMcpVisibility } from '@colloquy/core/internal';
import { loadBotConfig } from '../../config/load-config.js';
import { timeAgo } from '../../format/units.js';
import { openBotStore } from '../../state/open-store.js';
import { type CliIo, writeLines } from '../cli-io.js';
import { CLI } from '../cli-name.js';
import { parseFlags } from '../parse-flags.js';
import { renderTable } from '../render-table.js';

const VISIBILITIES: readonly SessionVisibility[] = ['self', 'tree', 'agent', 'all'];

/** Usage of `colloquy mcp token`. */
export const MCP_TOKEN_USAGE = `Usage: ${CLI} mcp token create --name <client> [--agent id] [--scopes read,send,spawn] [--visibility self|tree|agent|all]
       ${CLI} mcp token list [--all] [--json]
       ${CLI} mcp token revoke <name|id>`;

/**
 * `colloquy mcp token create|list|revoke`: the bearer tokens MCP clients present at `/mcp`. Works on
 * the bot's Store, so the bot need not run, and a running bot honours a change on the next request.
 * The token is printed once; the Store keeps its SHA-256.
 *
 * @param args - arguments after `mcp token`
 * @param io - streams and environment
 * @returns the exit code
 * @throws ColloquyError `INVALID_ARGUMENT` for a wrong usage, agent, scope or visibility; `CONFLICT`
 *   when an active token already has the name
 */
export async function mcpTokenCommand(args: readonly string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseFlags(
    args,
    {
      config: { type: 'string', short: 'c' },
      'state-dir': { type: 'string' },
      agent: { type: 'string' },
      name: { type: 'string' },
      scopes: { type: 'string' },
      visibility: { type: 'string' },
      all: { type: 'boolean' },
      json: { type: 'boolean' },
    },
    'mcp token',
  );
  const [action, subject] = positionals;
  if (action !== 'create' && action !== 'list' && action !== 'revoke') {
    throw new ColloquyError('INVALID_ARGUMENT', MCP_TOKEN_USAGE);
  }
  const loaded = await loadBotConfig({
    ...(values.config ? { configFile: values.config } : {}),
    ...(values['state-dir'] ? { stateDir: values['state-dir'] } : {}),
    env: io.env,
  });
  if (!loaded.ok) throw new ColloquyError('CONFIG_INVALID', formatIssues(loaded.issues));
  const config = loaded.config.core;
  const store = await openBotStore(loaded.config, silentLogger);
  try {
    const tokens = mcpTokenStore(store);
    if (action === 'list') {
      const listed = await tokens.listMcpTokens({ includeRevoked: values.all === true });
      writeLines(io.out, values.json ? JSON.stringify(listed.map(withoutHash), null, 2) : table(listed));
      return 0;
    }
    if (action === 'revoke') {
      if (!subject) throw new ColloquyError('INVALID_ARGUMENT', MCP_TOKEN_USAGE);
      const matches = (await tokens.listMcpTokens()).filter((t) => t.id === subject || t.name === subject);
      for (const token of matches) await tokens.revokeMcpToken(token.id, Date.now());
      writeLines(
        io.out,
        matches.length > 0
          ? `Revoked ${matches.map((t) => `${t.name} (${t.id})`).join(', ')}.`
          : `No active token "${subject}".`,
      );
      return matches.length > 0 ? 0 : 1;
    }
    const agentId = (values.agent ?? defaultAgentId(config)).trim().toLowerCase();
    if (!agentConfigFor(config, agentId).listed && agentId !== defaultAgentId(config)) {
      throw new ColloquyError(
        'INVALID_ARGUMENT',
        `No agent "${agentId}" in agents.list; use one of: ${config.agents.list.map((a) => a.id).join(', ') || defaultAgentId(config)}.`,
      );
    }
    if (!values.name)
      throw new ColloquyError('INVALID_ARGUMENT', `Give the client a --name. ${MCP_TOKEN_USAGE}`);
    const visibility = readVisibility(values.visibility);
    if ((await tokens.listMcpTokens({ agentId })).some((t) => t.name === values.name)) {
      throw new ColloquyError(
        'CONFLICT',
        `An active token of agent "${agentId}" is already named "${values.name}"; revoke it first (${CLI} mcp token revoke ${values.name}) or pick another name.`,
      );
    }
    const issued = issueMcpToken({
      agentId,
      name: values.name,
      scopes: parseMcpScopes(values.scopes ?? 'read'),
      visibility,
    });
    await tokens.putMcpToken(issued.record);
    const effective = effectiveMcpVisibility(visibility, config.tools.sessions.visibility);
    if (values.json) {
      writeLines(io.out, JSON.stringify({ token: issued.token, ...withoutHash(issued.record) }, null, 2));
    } else {
      writeLines(
        io.out,
        issued.token,
        '',
        `Token "${issued.record.name}" for agent ${agentId}: scopes ${issued.record.scopes.join(',')}, visibility ${visibility}` +
          (effective === visibility ? '.' : ` (clamped to ${effective} by tools.sessions.visibility).`),
        `It acts as the session agent:${agentId}:mcp:${issued.record.name}. This is the only time the token is shown.`,
      );
    }
    return 0;
  } finally {
    await store.close();
  }
}

function readVisibility(value: string | undefined): SessionVisibility {
  if (value === undefined) return 'tree';
  if ((VISIBILITIES as readonly string[]).includes(value)) return value as SessionVisibility;
  throw new ColloquyError(
    'INVALID_ARGUMENT',
    `--visibility must be one of ${VISIBILITIES.join(', ')}, not "${value}".`,
  );
}

function withoutHash(record: McpTokenRecord): Omit<McpTokenRecord, 'hash'> {
  const { hash: _hash, ...rest } = record;
  return rest;
}

function table(tokens: readonly McpTokenRecord[]): string {
  if (tokens.length === 0) return `No MCP tokens. Create one with ${CLI} mcp token create --name <client>.`;
  const now = Date.now();
  return renderTable(
    ['NAME', 'AGENT', 'SCOPES', 'VISIBILITY', 'CREATED', 'ID'],
    tokens.map((t) => [
      t.revokedAt === undefined ? t.name : `${t.name} (revoked)`,
      t.agentId,
      t.scopes.join(','),
      t.visibility,
      timeAgo(t.createdAt, now),
      t.id,
    ]),
  );
}
