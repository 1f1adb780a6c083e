import { resolveConfig } from '@colloquy/core';
import { makeSessionRecord } from '@colloquy/testkit';
import { describe, expect, it } from 'vitest';
import { mcpAllowListsFor, mcpNoticePrompt } from './mcp-allow-lists.js';

const config = resolveConfig({
  agents: {
    list: [
      { id: 'main', default: true, tools: { allow: ['github__*', 'fs__read'] } },
      { id: 'research', tools: { allow: ['*'] } },
      { id: 'plain' },
    ],
  },
});

const subagent = (agentId: string, requesterKey: string) =>
  makeSessionRecord(`agent:${agentId}:subagent:abc`, {
    kind: 'subagent',
    meta: { subagent: { mode: 'run', cleanup: 'keep', task: 't', requesterKey, spawnedAt: 0 } },
  });

describe('mcpAllowListsFor', () => {
  it("gives a session its agent's allow list, and an agent without one nothing", () => {
    expect(mcpAllowListsFor(config, makeSessionRecord('agent:main:main'))).toEqual([
      ['github__*', 'fs__read'],
    ]);
    expect(mcpAllowListsFor(config, makeSessionRecord('agent:plain:main'))).toEqual([[]]);
  });

  it("lets a sub-agent of the same agent inherit its parent's list", () => {
    expect(mcpAllowListsFor(config, subagent('main', 'agent:main:main'))).toEqual([
      ['github__*', 'fs__read'],
    ]);
  });

  it('bounds a sub-agent spawned across agents by both lists, so spawning never widens them', () => {
    expect(mcpAllowListsFor(config, subagent('research', 'agent:main:main'))).toEqual([
      ['*'],
      ['github__*', 'fs__read'],
    ]);
    expect(mcpAllowListsFor(config, subagent('research', 'agent:plain:main'))).toEqual([['*'], []]);
  });
});

describe('mcpNoticePrompt', () => {
  it('says nothing when every server is available, and lists the ones that are not', () => {
    expect(mcpNoticePrompt([])).toBeUndefined();
    expect(mcpNoticePrompt(['The MCP server "fs" is unavailable.'])).toBe(
      'Some of your tools are unavailable right now:\n- The MCP server "fs" is unavailable.\nIf the user needs them, tell them so instead of guessing.',
    );
  });
});
