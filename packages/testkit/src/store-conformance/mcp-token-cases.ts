import { isColloquyError } from '@colloquy/core';
import { type McpTokenRecord, mcpTokenStore } from '@colloquy/core/gateway';
import type { Store } from '@colloquy/core/store';
import { describe, expect, it } from 'vitest';
import { T0 } from '../fakes/record-factories.js';
import { useFreshStore } from './fresh-store.js';
import type { StoreConformanceOptions } from './store-cases.js';

const token = (id: string, overrides: Partial<McpTokenRecord> = {}): McpTokenRecord => ({
  id,
  name: `client-${id}`,
  agentId: 'main',
  hash: `hash-${id}`,
  scopes: ['read'],
  visibility: 'tree',
  createdAt: T0,
  ...overrides,
});

/**
 * The MCP token cases: tokens are stored by id, found by their hash, listed per agent (revoked ones
 * only when asked), revoked once, and a second record with a stored id or hash is a `CONFLICT`.
 *
 * @param makeStore - returns a fresh, empty store for each test
 * @param options - cleanup after each test
 */
export function describeMcpTokenCases(
  makeStore: () => Store | Promise<Store>,
  options: StoreConformanceOptions = {},
): void {
  let store!: Store;
  useFreshStore(makeStore, options, (fresh) => {
    store = fresh;
  });

  describe('MCP tokens', () => {
    it('stores a token, finds it by hash, lists by agent oldest first, and revokes it once', async () => {
      const tokens = mcpTokenStore(store);
      await tokens.putMcpToken(token('b', { createdAt: T0 + 2, scopes: ['read', 'send', 'spawn'] }));
      await tokens.putMcpToken(token('a', { createdAt: T0 + 1, visibility: 'all' }));
      await tokens.putMcpToken(token('c', { createdAt: T0 + 3, agentId: 'ops' }));
      expect(await tokens.getMcpTokenByHash('hash-b')).toEqual(
        token('b', { createdAt: T0 + 2, scopes: ['read', 'send', 'spawn'] }),
      );
      expect(await tokens.getMcpTokenByHash('hash-x')).toBeUndefined();
      expect((await tokens.listMcpTokens()).map((t) => t.id)).toEqual(['a', 'b', 'c']);
      expect((await tokens.listMcpTokens({ agentId: 'main' })).map((t) => t.id)).toEqual(['a', 'b']);

      expect(await tokens.revokeMcpToken('a', T0 + 10)).toBe(true);
      expect(await tokens.revokeMcpToken('a', T0 + 11)).toBe(false);
      expect(await tokens.revokeMcpToken('nope', T0 + 11)).toBe(false);
      expect((await tokens.getMcpTokenByHash('hash-a'))?.revokedAt).toBe(T0 + 10);
      expect((await tokens.listMcpTokens({ agentId: 'main' })).map((t) => t.id)).toEqual(['b']);
      expect((await tokens.listMcpTokens({ includeRevoked: true })).map((t) => t.id)).toEqual([
        'a',
        'b',
        'c',
      ]);
    });

    it('refuses a second token with a stored id or hash, keeping the first', async () => {
      const tokens = mcpTokenStore(store);
      await tokens.putMcpToken(token('a'));
      for (const clash of [token('a', { hash: 'other' }), token('z', { hash: 'hash-a' })]) {
        let thrown: unknown;
        try {
          await tokens.putMcpToken(clash);
        } catch (error) {
          thrown = error;
        }
        expect(isColloquyError(thrown) && thrown.code).toBe('CONFLICT');
      }
      expect(await tokens.listMcpTokens()).toEqual([token('a')]);
    });

    it('rolls a token back with its transaction', async () => {
      await store
        .transaction(async (tx) => {
          await mcpTokenStore(tx).putMcpToken(token('a'));
          throw new Error('undo');
        })
        .catch(() => undefined);
      expect(await mcpTokenStore(store).getMcpTokenByHash('hash-a')).toBeUndefined();
    });
  });
}
