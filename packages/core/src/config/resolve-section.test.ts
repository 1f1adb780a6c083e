import { Type } from '@sinclair/typebox';
import { describe, expect, it } from 'vitest';
import { isColloquyError } from '../errors/colloquy-error.js';
import { checkSection, resolveSection } from './resolve-section.js';

const Section = Type.Object(
  {
    accounts: Type.Array(
      Type.Object(
        {
          id: Type.String({ default: 'default' }),
          token: Type.String({ minLength: 1 }),
          apiRoot: Type.Optional(Type.String({ pattern: '^https?://' })),
        },
        { additionalProperties: false },
      ),
      { default: [] },
    ),
    mode: Type.Union([Type.Literal('polling'), Type.Literal('webhook')], { default: 'polling' }),
    port: Type.Integer({ minimum: 0, maximum: 65535, default: 80 }),
    groups: Type.Record(Type.String(), Type.Boolean(), { default: {} }),
  },
  { additionalProperties: false },
);

const at = { path: 'channels.demo', label: 'Demo' };

describe('checkSection', () => {
  it('fills every default when the section is not written', () => {
    expect(checkSection(Section, undefined, at)).toEqual({
      ok: true,
      value: { accounts: [], mode: 'polling', port: 80, groups: {} },
    });
  });

  it('fills defaults inside arrays and never modifies the input', () => {
    const input = { accounts: [{ token: 'x' }] };
    const checked = checkSection(Section, input, at);
    expect(checked).toMatchObject({ ok: true, value: { accounts: [{ id: 'default', token: 'x' }] } });
    expect(input).toEqual({ accounts: [{ token: 'x' }] });
  });

  it('reports every bad setting with its full path, what was expected and what was found', () => {
    const checked = checkSection(
      Section,
      {
        accounts: [{ token: 'x', apiRoot: 'ftp://a', tokn: 1 }],
        mode: 'hook',
        port: 70000,
        groups: { '-1': 'y' },
      },
      at,
    );
    expect(checked.ok).toBe(false);
    if (checked.ok) return;
    expect(checked.issues).toEqual([
      expect.objectContaining({ path: 'channels.demo.accounts[0].tokn', got: 'unknown setting' }),
      {
        path: 'channels.demo.accounts[0].apiRoot',
        expected: 'a string matching ^https?://',
        got: '"ftp://a"',
      },
      { path: 'channels.demo.mode', expected: 'one of "polling" | "webhook"', got: '"hook"' },
      { path: 'channels.demo.port', expected: 'integer 0..65535', got: '70000' },
      { path: 'channels.demo.groups["-1"]', expected: 'true or false', got: '"y"' },
    ]);
  });

  it('hides the values of secret settings', () => {
    const checked = checkSection(Section, { accounts: [{ token: 5 }] }, at);
    expect(checked).toMatchObject({
      ok: false,
      issues: [{ path: 'channels.demo.accounts[0].token', got: '5' }],
    });
    const hidden = checkSection(Section, { accounts: [{ token: 'secret-value', id: 3 }] }, at);
    expect(JSON.stringify(hidden)).not.toContain('secret-value');
  });

  it('reports a section that is not an object at the section path', () => {
    expect(checkSection(Section, 'yes', at)).toEqual({
      ok: false,
      issues: [{ path: 'channels.demo', expected: 'an object', got: '"yes"' }],
    });
  });

  it('runs the extra checks only on a schema-valid section, with its defaults', () => {
    const seen: unknown[] = [];
    const check = (section: { port: number }) => {
      seen.push(section.port);
      return section.port === 80 ? [{ path: 'channels.demo.port', expected: 'not 80', got: '80' }] : [];
    };
    expect(checkSection(Section, {}, { ...at, check })).toMatchObject({
      ok: false,
      issues: [{ expected: 'not 80' }],
    });
    expect(checkSection(Section, { port: 'x' }, { ...at, check }).ok).toBe(false);
    expect(seen).toEqual([80]);
  });
});

describe('resolveSection', () => {
  it('returns the resolved section', () => {
    expect(resolveSection(Section, { port: 0 }, at).port).toBe(0);
  });

  it('throws CONFIG_INVALID naming every problem and the section to fix', () => {
    let caught: unknown;
    try {
      resolveSection(Section, { mode: 'hook', port: -1 }, at);
    } catch (error) {
      caught = error;
    }
    expect(isColloquyError(caught) && caught.code).toBe('CONFIG_INVALID');
    if (!isColloquyError(caught)) return;
    expect(caught.message).toBe(
      'Invalid Demo config (2 problems):\n' +
        '  - channels.demo.mode: expected one of "polling" | "webhook", got "hook"\n' +
        '  - channels.demo.port: expected integer 0..65535, got -1\n' +
        'Fix these settings under channels.demo and start again.',
    );
    expect(caught.details.issues).toHaveLength(2);
  });
});
