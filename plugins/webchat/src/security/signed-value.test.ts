import { describe, expect, it } from 'vitest';
import { randomId, secretsEqual, signValue, verifySignedValue } from './signed-value.js';

const SECRET = 'a'.repeat(40);

describe('signed values', () => {
  it('verifies a value signed with the same secret and purpose', () => {
    const signed = signValue(SECRET, 'visitor', 'v_abc');
    expect(verifySignedValue(SECRET, 'visitor', signed)).toBe('v_abc');
  });

  it('refuses a value whose signature was made for another purpose', () => {
    const signed = signValue(SECRET, 'admin', 'v_abc');
    expect(verifySignedValue(SECRET, 'visitor', signed)).toBeUndefined();
  });

  it('refuses a value signed with another secret', () => {
    const signed = signValue('b'.repeat(40), 'visitor', 'v_abc');
    expect(verifySignedValue(SECRET, 'visitor', signed)).toBeUndefined();
  });

  it('refuses a tampered value or signature', () => {
    const signed = signValue(SECRET, 'visitor', 'v_abc');
    const [value, sig] = signed.split('.') as [string, string];
    expect(verifySignedValue(SECRET, 'visitor', `v_abd.${sig}`)).toBeUndefined();
    const flipped = sig.slice(0, -1) + (sig.endsWith('A') ? 'B' : 'A');
    expect(verifySignedValue(SECRET, 'visitor', `${value}.${flipped}`)).toBeUndefined();
  });

  it('refuses malformed input without throwing', () => {
    for (const bad of ['', '.', 'novalue', '.sig', 'v.', 'x'.repeat(600), 'a.b.c']) {
      expect(verifySignedValue(SECRET, 'visitor', bad)).toBeUndefined();
    }
  });

  it('compares secrets of different lengths safely', () => {
    expect(secretsEqual('token-1', 'token-1')).toBe(true);
    expect(secretsEqual('token-1', 'token-12')).toBe(false);
    expect(secretsEqual('', 'x')).toBe(false);
  });

  it('makes distinct url-safe ids', () => {
    const ids = new Set(Array.from({ length: 200 }, () => randomId()));
    expect(ids.size).toBe(200);
    for (const id of ids) expect(id).toMatch(/^[A-Za-z0-9_-]{20}$/);
  });
});
