import { describe, expect, it } from 'vitest';
import type { StoreOperations } from '../interfaces/store.js';
import { MemoryStore } from '../store/memory-store.js';
import {
  effectiveMcpVisibility,
  hashMcpToken,
  isMcpClientSessionKey,
  issueMcpToken,
  mcpClientSessionKey,
  mcpTokenStore,
  parseMcpScopes,
} from './mcp-tokens.js';

describe('issueMcpToken', () => {
  it('issues a prefixed 256-bit token whose record holds only its SHA-256', () => {
    const { token, record } = issueMcpToken({
      agentId: 'Main',
      name: 'laptop',
      scopes: ['spawn', 'read'],
      now: () => 5,
    });
    expect(token).toMatch(/^colloquy_mcp_[A-Za-z0-9_-]{43}$/);
    expect(record).toMatchObject({
      name: 'laptop',
      agentId: 'main',
      scopes: ['read', 'spawn'],
      visibility: 'tree',
      createdAt: 5,
    });
    expect(record.hash).toBe(hashMcpToken(token));
    expect(JSON.stringify(record)).not.toContain(token.slice(13));
    expect(issueMcpToken({ agentId: 'main', name: 'laptop' }).token).not.toBe(token);
  });

  it('refuses a client name that cannot be the last part of a session key', () => {
    for (const name of ['', 'Laptop', 'a:b', '-x', 'x'.repeat(65)]) {
      expect(() => issueMcpToken({ agentId: 'main', name })).toThrow(/client name/);
    }
  });
});

describe('parseMcpScopes', () => {
  it('reads a comma list once per scope, and names an unknown scope', () => {
    expect(parseMcpScopes(' spawn, read,read ')).toEqual(['read', 'spawn']);
    expect(() => parseMcpScopes('read,admin')).toThrow(/Unknown MCP scope "admin"/);
    expect(() => parseMcpScopes(' , ')).toThrow(/at least one/);
  });
});

describe('effectiveMcpVisibility', () => {
  it('never lets a token see wider than tools.sessions.visibility', () => {
    expect(effectiveMcpVisibility('all', 'tree')).toBe('tree');
    expect(effectiveMcpVisibility('self', 'all')).toBe('self');
    expect(effectiveMcpVisibility('agent', 'agent')).toBe('agent');
  });
});

describe('MCP client session keys', () => {
  it('are agent:<id>:mcp:<name>, and only those are recognised', () => {
    expect(mcpClientSessionKey('main', 'laptop')).toBe('agent:main:mcp:laptop');
    expect(isMcpClientSessionKey('agent:main:mcp:laptop')).toBe(true);
    expect(isMcpClientSessionKey('agent:main:mcp:group:1')).toBe(false);
    expect(isMcpClientSessionKey('agent:main:main')).toBe(false);
  });
});

describe('mcpTokenStore', () => {
  it('binds the token calls of a store that has them', async () => {
    const store = new MemoryStore();
    const { record } = issueMcpToken({ agentId: 'main', name: 'laptop' });
    await mcpTokenStore(store).putMcpToken(record);
    expect(await mcpTokenStore(store).getMcpTokenByHash(record.hash)).toEqual(record);
  });

  it('refuses a store without them with NOT_SUPPORTED naming what is missing', () => {
    const store = new MemoryStore();
    const older = { getSession: store.getSession.bind(store) } as unknown as StoreOperations;
    expect(() => mcpTokenStore(older)).toThrow(
      expect.objectContaining({
        code: 'NOT_SUPPORTED',
        message: expect.stringContaining(
          'missing putMcpToken, getMcpTokenByHash, listMcpTokens, revokeMcpToken',
        ),
      }),
    );
  });
});
