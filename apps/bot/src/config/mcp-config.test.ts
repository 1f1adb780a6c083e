import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { formatIssues } from '@colloquy/core';
import { describe, expect, it } from 'vitest';
import { loadBotConfig } from './load-config.js';

/** Loads a config file holding `config`, with `env` as the environment. */
async function load(config: Record<string, unknown>, env: Record<string, string> = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'colloquy-mcp-config-'));
  try {
    const file = join(dir, 'c.json5');
    writeFileSync(file, JSON.stringify(config));
    return await loadBotConfig({ configFile: file, env, baseDir: dir });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('the mcp section', () => {
  it('turns stdio and HTTP servers into the runtime options, the bearer token read from its variable', async () => {
    const loaded = await load(
      {
        mcp: {
          callTimeoutSeconds: 20,
          servers: {
            fs: { command: 'npx', args: ['-y', 'fs-server'], env: { ROOT: '/srv' }, cwd: '/tmp' },
            github: {
              url: 'https://mcp.example.com/mcp',
              headers: { 'x-team': 'blue' },
              bearerTokenEnv: 'GITHUB_MCP_TOKEN',
              callTimeoutSeconds: 5,
            },
          },
        },
        agents: { list: [{ id: 'main', tools: { allow: ['github__*', 'fs__read_file'] } }] },
      },
      { GITHUB_MCP_TOKEN: 'ghp-token-value-1' },
    );
    if (!loaded.ok) throw new Error(formatIssues(loaded.issues));
    expect(loaded.config.mcp).toEqual({
      servers: {
        fs: { command: 'npx', args: ['-y', 'fs-server'], env: { ROOT: '/srv' }, cwd: '/tmp' },
        github: {
          url: 'https://mcp.example.com/mcp',
          headers: { 'x-team': 'blue' },
          bearerToken: 'ghp-token-value-1',
          callTimeoutMs: 5000,
        },
      },
      callTimeoutMs: 20_000,
      startTimeoutMs: 30_000,
      maxResultChars: 100_000,
    });
    expect(loaded.config.core.redaction.secrets).toContain('ghp-token-value-1');
  });

  it('has no servers by default', async () => {
    const loaded = await load({});
    expect(loaded.ok && loaded.config.mcp.servers).toEqual({});
  });

  it('explains a server that is both, neither, or mixes the kinds, and an unset token variable', async () => {
    const loaded = await load({
      mcp: {
        servers: {
          both: { command: 'x', url: 'http://127.0.0.1:1/mcp' },
          neither: { args: ['a'] },
          mixed: { url: 'http://127.0.0.1:1/mcp', cwd: '/tmp', bearerTokenEnv: 'NOT_SET_VAR' },
          two__parts: { command: 'x' },
        },
      },
    });
    expect(loaded.ok).toBe(false);
    if (loaded.ok) return;
    expect(loaded.issues).toEqual([
      {
        path: 'mcp.servers.both',
        expected: 'either "command" (a stdio server) or "url" (a Streamable HTTP server)',
        got: 'both',
      },
      {
        path: 'mcp.servers.neither',
        expected: 'either "command" (a stdio server) or "url" (a Streamable HTTP server)',
        got: 'neither',
      },
      {
        path: 'mcp.servers.mixed.cwd',
        expected: 'no "cwd" on an HTTP server (it has "url")',
        got: 'a value',
      },
      {
        path: 'mcp.servers.mixed.bearerTokenEnv',
        expected: 'the name of a set environment variable (export NOT_SET_VAR=<token>)',
        got: 'NOT_SET_VAR (not set)',
      },
      {
        path: 'mcp.servers.two__parts',
        expected:
          'a server name of lower-case letters, digits, "-" and single "_" (tools are named <server>__<tool>)',
        got: '"two__parts"',
      },
    ]);
  });

  it('names the path and the expected type of a wrong setting', async () => {
    const loaded = await load({ mcp: { servers: { web: { url: 'ftp://x' } }, callTimeoutSeconds: 0 } });
    expect(loaded.ok).toBe(false);
    if (loaded.ok) return;
    expect(loaded.issues.map((issue) => [issue.path, issue.expected])).toEqual([
      ['mcp.servers.web.url', 'an http:// or https:// URL of the MCP endpoint'],
      ['mcp.callTimeoutSeconds', 'integer 1..3600'],
    ]);
  });

  it('refuses an allow entry naming a server that is not configured, and lets a leading * through', async () => {
    const loaded = await load({
      mcp: { servers: { fs: { command: 'x' } } },
      agents: { list: [{ id: 'main', tools: { allow: ['fs__*', '*__search', 'gitlab__*', 'fs'] } }] },
    });
    expect(loaded.ok).toBe(false);
    if (loaded.ok) return;
    expect(loaded.issues).toEqual([
      {
        path: 'agents.list[0].tools.allow[2]',
        expected: '<server>__<tool> or <server>__* naming a server of mcp.servers (fs)',
        got: '"gitlab__*"',
      },
      {
        path: 'agents.list[0].tools.allow[3]',
        expected: '<server>__<tool> or <server>__* naming a server of mcp.servers (fs)',
        got: '"fs"',
      },
    ]);
  });
});
