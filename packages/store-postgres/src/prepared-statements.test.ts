import { describe, expect, it } from 'vitest';
import { StatementNames } from './prepared-statements.js';

describe('StatementNames', () => {
  it('gives each text one name, the same every time', () => {
    const names = new StatementNames();
    const a = names.nameOf('SELECT 1');
    const b = names.nameOf('SELECT 2');
    expect(a).toMatch(/^colloquy_\d+$/);
    expect(b).not.toBe(a);
    expect(names.nameOf('SELECT 1')).toBe(a);
  });

  it('stops naming new texts at its cap and keeps the names it gave', () => {
    const names = new StatementNames(2);
    const first = names.nameOf('SELECT 1');
    names.nameOf('SELECT 2');
    expect(names.nameOf('SELECT 3')).toBeUndefined();
    expect(names.nameOf('SELECT 1')).toBe(first);
  });
});
