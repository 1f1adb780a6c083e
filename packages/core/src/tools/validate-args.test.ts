import { Type } from '@sinclair/typebox';
import { describe, expect, it } from 'vitest';
import { validateToolArgs } from './validate-args.js';

const Params = Type.Object(
  { name: Type.String({ maxLength: 10 }), limit: Type.Optional(Type.Number({ minimum: 1 })) },
  { additionalProperties: false },
);

describe('validateToolArgs', () => {
  it('accepts valid arguments and returns them typed', () => {
    expect(validateToolArgs('t', Params, { name: 'a', limit: 2 })).toEqual({
      ok: true,
      value: { name: 'a', limit: 2 },
    });
  });

  it('names every bad path: wrong type, missing required, unknown key', () => {
    const result = validateToolArgs('demo', Params, { limit: 'x', extra: 1 });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.error).toMatch(/^Invalid arguments for demo: /);
    expect(result.error).toContain('/name');
    expect(result.error).toContain('/limit');
    expect(result.error).toContain('/extra');
  });

  it('shortens huge strings in the message instead of echoing them', () => {
    const result = validateToolArgs('demo', Params, { name: 'x'.repeat(100_000) });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.error.length).toBeLessThan(400);
    expect(result.error).toContain('100000 characters');
  });

  it('refuses non-object arguments with a sentence, never a throw', () => {
    for (const bad of ['text', 42, [1, 2], true]) {
      const result = validateToolArgs('demo', Params, bad);
      expect(result.ok).toBe(false);
      if (!result.ok) expect(result.error).toMatch(/expected a JSON object/);
    }
  });

  it('treats absent arguments as an empty object', () => {
    const Empty = Type.Object({}, { additionalProperties: false });
    expect(validateToolArgs('t', Empty, undefined)).toEqual({ ok: true, value: {} });
    expect(validateToolArgs('t', Empty, null)).toEqual({ ok: true, value: {} });
  });
});
