/** Attributes of a cookie this plugin sets. */
export interface CookieAttributes {
  maxAgeSeconds: number;
  sameSite: 'Strict' | 'Lax';
  secure: boolean;
}

/**
 * Parses a `Cookie` request header into name -> value (first occurrence wins; values are not decoded).
 */
export function parseCookies(header: string | undefined): Map<string, string> {
  const cookies = new Map<string, string>();
  if (!header) return cookies;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    const name = part.slice(0, eq).trim();
    const value = part.slice(eq + 1).trim();
    if (name && !cookies.has(name)) cookies.set(name, value);
  }
  return cookies;
}

/** Serialises an HttpOnly `Set-Cookie` header value for the whole site. */
export function serializeCookie(name: string, value: string, attributes: CookieAttributes): string {
  const parts = [
    `${name}=${value}`,
    'Path=/',
    'HttpOnly',
    `SameSite=${attributes.sameSite}`,
    `Max-Age=${attributes.maxAgeSeconds}`,
  ];
  if (attributes.secure) parts.push('Secure');
  return parts.join('; ');
}
