import { resolveConfig } from '@colloquy/core';
import { MCP_SCOPES } from '@colloquy/core/gateway';
import { Client } from '@modelcontextprotocol/client';
import { InMemoryTransport } from '@modelcontextprotocol/server';
import { afterEach, describe, expect, it } from 'vitest';
import { type McpStdioServer, serveMcpStdio } from '../../src/mcp/index.js';
import { type Harness, startHarness } from '../support/harness.js';

let h: Harness | undefined;
let served: McpStdioServer | undefined;

afterEach(async () => {
  await served?.close();
  await h?.close();
  served = undefined;
  h = undefined;
});

describe('MCP over a stdio transport', () => {
  it('serves the same tools as /mcp, acting as the client session of its name', async () => {
    h = await startHarness({ script: () => 'done' });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    served = serveMcpStdio({
      gateway: h.runtime.gateway,
      config: resolveConfig({ agents: { defaults: { model: 'scripted/test' } } }),
      client: { agentId: 'main', name: 'desktop', scopes: MCP_SCOPES, visibility: 'tree' },
      transport: serverSide,
    });
    const client = new Client({ name: 'test', version: '1.0.0' });
    await client.connect(clientSide);
    expect((await client.listTools()).tools).toHaveLength(9);
    const spawned = await client.callTool({ name: 'sessions_spawn', arguments: { task: 'work' } });
    expect(spawned.structuredContent).toMatchObject({ status: 'accepted' });
    const child = await h.store.getSession(
      (spawned.structuredContent as { childSessionKey: string }).childSessionKey,
    );
    expect(child?.spawnedBy).toBe('agent:main:mcp:desktop');
    const waited = await client.callTool({ name: 'events_wait', arguments: { timeoutSeconds: 10 } });
    expect(waited.structuredContent).toMatchObject({ count: 1, events: [{ kind: 'announce' }] });
    await client.close();
  });
});
