import { ColloquyError } from '@colloquy/core';
import { describe, expect, it } from 'vitest';
import { fromErrorBody, parseRequestFrame, toErrorBody } from './frames.js';

describe('parseRequestFrame', () => {
  it('reads a request and defaults params to an empty object', async () => {
    expect(parseRequestFrame('{"id":7,"method":"agents.list"}')).toEqual({
      ok: true,
      frame: { id: 7, method: 'agents.list', params: {} },
    });
  });

  it.each([
    ['not json', '{', null, 'not valid JSON'],
    ['an array', '[1]', null, 'JSON object'],
    ['no id', '{"method":"x"}', null, '"id"'],
    ['no method', '{"id":"a"}', 'a', '"method"'],
    ['array params', '{"id":1,"method":"x","params":[]}', 1, '"params"'],
  ])('answers %s with INVALID_ARGUMENT', (_name, text, id, fragment) => {
    const parsed = parseRequestFrame(text);
    expect(parsed.ok).toBe(false);
    if (parsed.ok) return;
    expect(parsed.id).toBe(id);
    expect(parsed.error.code).toBe('INVALID_ARGUMENT');
    expect(parsed.error.message).toContain(fragment);
  });
});

describe('error bodies', () => {
  it('round-trip a ColloquyError and wrap anything else as INTERNAL', async () => {
    const body = toErrorBody(new ColloquyError('SESSION_NOT_FOUND', 'No session "x".', { key: 'x' }));
    expect(body).toEqual({ code: 'SESSION_NOT_FOUND', message: 'No session "x".', details: { key: 'x' } });
    expect(fromErrorBody(body)).toMatchObject({ code: 'SESSION_NOT_FOUND', details: { key: 'x' } });
    expect(toErrorBody(new Error('boom')).code).toBe('INTERNAL');
    expect(fromErrorBody('garbage').code).toBe('INTERNAL');
  });
});
