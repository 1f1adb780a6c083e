import { describe, expect, it } from 'vitest';
import { agentConfigFor, defaultAgentId } from './agent-config.js';
import { resolveConfig } from './resolve-config.js';

describe('defaultAgentId', () => {
  it('is main with the default config', () => {
    expect(defaultAgentId(resolveConfig({}))).toBe('main');
  });

  it('picks the entry marked default', () => {
    const config = resolveConfig({ agents: { list: [{ id: 'a' }, { id: 'b', default: true }] } });
    expect(defaultAgentId(config)).toBe('b');
  });

  it('falls back to the first entry when none is marked', () => {
    const config = resolveConfig({ agents: { list: [{ id: 'first' }, { id: 'second' }] } });
    expect(defaultAgentId(config)).toBe('first');
  });
});

describe('agentConfigFor', () => {
  const config = resolveConfig({
    agents: {
      defaults: {
        model: 'openai/gpt-4o-mini',
        systemPrompt: 'Be brief.',
        sandbox: { enabled: true },
        subagents: { maxSpawnDepth: 2 },
      },
      list: [
        { id: 'main', default: true },
        {
          id: 'research',
          name: 'Research',
          model: 'anthropic/claude-sonnet',
          sandboxed: false,
          subagents: { allowAgents: ['*'] },
          tools: { allow: ['github__*', 'fs__read'] },
        },
      ],
    },
  });

  it('fills an entry from agents.defaults', () => {
    expect(agentConfigFor(config, 'main')).toEqual({
      id: 'main',
      default: true,
      listed: true,
      model: 'openai/gpt-4o-mini',
      systemPrompt: 'Be brief.',
      sandboxed: true,
      subagents: {
        maxSpawnDepth: 2,
        maxChildrenPerAgent: 5,
        runTimeoutSeconds: 0,
        archiveAfterMinutes: 60,
        allowAgents: ['main'],
      },
      toolAllow: [],
    });
  });

  it('lets the entry override the defaults', () => {
    const research = agentConfigFor(config, 'research');
    expect(research).toMatchObject({
      id: 'research',
      name: 'Research',
      default: false,
      model: 'anthropic/claude-sonnet',
      sandboxed: false,
    });
    expect(research.subagents.allowAgents).toEqual(['*']);
    expect(research.toolAllow).toEqual(['github__*', 'fs__read']);
  });

  it('matches the agent id like a session key does (trimmed, case-insensitive)', () => {
    expect(agentConfigFor(config, '  Research ').id).toBe('research');
  });

  it('gives an agent that is not configured the defaults alone, marked as not listed', () => {
    expect(agentConfigFor(config, 'ghost')).toMatchObject({
      id: 'ghost',
      default: false,
      listed: false,
      model: 'openai/gpt-4o-mini',
      sandboxed: true,
      subagents: { maxSpawnDepth: 2, allowAgents: ['ghost'] },
    });
  });

  it('returns a copy whose allowAgents can be changed safely', () => {
    agentConfigFor(config, 'research').subagents.allowAgents.push('x');
    expect(agentConfigFor(config, 'research').subagents.allowAgents).toEqual(['*']);
  });
});
