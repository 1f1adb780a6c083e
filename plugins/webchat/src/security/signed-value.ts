import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * Signs `value` for one `purpose` (so a signature made for one cookie never validates another).
 *
 * @param secret - the signing secret
 * @param purpose - a fixed label such as `visitor` or `admin`
 * @param value - the text to sign (must not contain `.`)
 * @returns `<value>.<base64url HMAC-SHA256>`
 */
export function signValue(secret: string, purpose: string, value: string): string {
  return `${value}.${mac(secret, purpose, value).toString('base64url')}`;
}

/**
 * Checks a value made by {@link signValue} with a constant-time comparison.
 *
 * @returns the original value, or `undefined` when the input is malformed or the signature is wrong
 */
export function verifySignedValue(secret: string, purpose: string, signed: string): string | undefined {
  const dot = signed.lastIndexOf('.');
  if (dot <= 0 || signed.length > 512) return undefined;
  const value = signed.slice(0, dot);
  const given = Buffer.from(signed.slice(dot + 1), 'base64url');
  const expected = mac(secret, purpose, value);
  if (given.length !== expected.length) return undefined;
  return timingSafeEqual(given, expected) ? value : undefined;
}

/** Compares two secrets in constant time (whatever their lengths). */
export function secretsEqual(a: string, b: string): boolean {
  const ha = createHmac('sha256', 'colloquy-compare').update(a).digest();
  const hb = createHmac('sha256', 'colloquy-compare').update(b).digest();
  return timingSafeEqual(ha, hb);
}

/** A random URL-safe id with `bytes` bytes of entropy. */
export function randomId(bytes = 15): string {
  return randomBytes(bytes).toString('base64url');
}

function mac(secret: string, purpose: string, value: string): Buffer {
  return createHmac('sha256', secret).update(`${purpose}\0${value}`).digest();
}
