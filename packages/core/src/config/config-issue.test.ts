import { Type } from '@sinclair/typebox';
import { describe, expect, it } from 'vitest';
import { formatIssue, unknownSettingIssue } from './config-issue.js';
import { formatIssues } from './resolve-config.js';

const Account = Type.Object(
  { token: Type.String(), tokenEnv: Type.String(), apiRoot: Type.String(), gatewayUrl: Type.String() },
  { additionalProperties: false },
);

describe('unknownSettingIssue', () => {
  it('lists the allowed settings and suggests the closest one', () => {
    const issue = unknownSettingIssue('accounts.0.gatewayURL', {
      path: '/accounts/0/gatewayURL',
      schema: Account,
    });
    expect(issue).toMatchObject({
      got: 'unknown setting',
      allowed: ['token', 'tokenEnv', 'apiRoot', 'gatewayUrl'],
      suggestion: 'gatewayUrl',
    });
    expect(formatIssue(issue)).toBe(
      'accounts.0.gatewayURL: unknown setting; allowed: token, tokenEnv, apiRoot, gatewayUrl; did you mean "gatewayUrl"?',
    );
  });

  it('suggests nothing when no allowed setting is close', () => {
    const issue = unknownSettingIssue('accounts.0.colour', { path: '/accounts/0/colour', schema: Account });
    expect(issue.suggestion).toBeUndefined();
    expect(formatIssue(issue)).toBe(
      'accounts.0.colour: unknown setting; allowed: token, tokenEnv, apiRoot, gatewayUrl',
    );
  });

  it('names the key pattern of a record', () => {
    const groups = Type.Record(Type.String({ pattern: '^-?[0-9]+$' }), Type.Boolean());
    const issue = unknownSettingIssue('groups.abc', { path: '/groups/abc', schema: groups });
    expect(formatIssue(issue)).toBe('groups.abc: expected a key matching ^-?[0-9]+$, got "abc"');
  });
});

describe('formatIssues', () => {
  it('words unknown settings and wrong values each their own way', () => {
    const message = formatIssues([
      unknownSettingIssue('sesion', { path: '/sesion', schema: Type.Object({ session: Type.String() }) }),
      { path: 'gateway.port', expected: 'integer 0..65535', got: '"x"' },
    ]);
    expect(message).toContain('  - sesion: unknown setting; allowed: session; did you mean "session"?');
    expect(message).toContain('  - gateway.port: expected integer 0..65535, got "x"');
  });
});
