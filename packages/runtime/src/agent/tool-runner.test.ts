import { type AgentTool, toolResult } from '@colloquy/core';
import { Type } from '@sinclair/typebox';
import { describe, expect, it } from 'vitest';
import { runToolCall } from './tool-runner.js';

const seen: unknown[] = [];
const listTool: AgentTool = {
  name: 'list',
  description: 'Lists things.',
  parameters: Type.Object(
    { kinds: Type.Optional(Type.Array(Type.String())), limit: Type.Integer({ minimum: 1, default: 20 }) },
    { additionalProperties: false },
  ),
  execute: async (_id, args) => {
    seen.push(args);
    return toolResult({ status: 'ok', args });
  },
};

const parse = (text: string) => JSON.parse(text) as { status: string; error: string; paths?: string[] };

describe('runToolCall', () => {
  it('fills schema defaults and runs the tool with valid arguments', async () => {
    const outcome = await runToolCall([listTool], {
      id: 'c1',
      name: 'list',
      arguments: { kinds: ['group'] },
    });
    expect(outcome.isError).toBe(false);
    expect(seen.at(-1)).toEqual({ kinds: ['group'], limit: 20 });
  });

  it('names every bad path and never calls the tool with invalid arguments', async () => {
    const before = seen.length;
    const outcome = await runToolCall([listTool], {
      id: 'c1',
      name: 'list',
      arguments: { kinds: ['group', 7], limit: 0, extra: true },
    });
    expect(outcome.isError).toBe(true);
    const body = parse(outcome.text);
    expect(body.status).toBe('error');
    expect(body.paths).toEqual(expect.arrayContaining(['/kinds/1', '/limit']));
    expect(body.error).toContain('Fix these fields');
    expect(seen.length).toBe(before);
  });

  it('accepts arguments sent as a JSON string and refuses a string that is not JSON', async () => {
    expect((await runToolCall([listTool], { id: 'c', name: 'list', arguments: '{"limit":2}' })).isError).toBe(
      false,
    );
    const bad = await runToolCall([listTool], { id: 'c', name: 'list', arguments: '{limit' });
    expect(parse(bad.text).error).toContain('not valid JSON');
  });

  it('turns an unknown tool, a throwing tool and an abort into error results', async () => {
    const unknown = await runToolCall([listTool], { id: 'c', name: 'nope', arguments: {} });
    expect(parse(unknown.text).error).toBe('Unknown tool "nope". Available tools: list.');
    const thrower: AgentTool = {
      ...listTool,
      name: 'boom',
      execute: async () => Promise.reject(new Error('kaput')),
    };
    expect(parse((await runToolCall([thrower], { id: 'c', name: 'boom', arguments: {} })).text).error).toBe(
      'boom failed: kaput',
    );
    const controller = new AbortController();
    controller.abort();
    const aborted = await runToolCall([thrower], { id: 'c', name: 'boom', arguments: {} }, controller.signal);
    expect(parse(aborted.text).error).toContain('aborted');
  });
});
