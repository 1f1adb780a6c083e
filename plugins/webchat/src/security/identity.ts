import { createHmac } from 'node:crypto';
import { ColloquyError } from '@colloquy/core';
import { parseCookies, serializeCookie } from './cookies.js';
import { randomId, secretsEqual, signValue, verifySignedValue } from './signed-value.js';

/** The visitor cookie's name. */
export const VISITOR_COOKIE = 'colloquy_vid';
/** The owner cookie's name. */
export const ADMIN_COOKIE = 'colloquy_admin';

const VISITOR_ID = /^v_[A-Za-z0-9_-]{20}$/;
const VISITOR_MAX_AGE_S = 400 * 24 * 3600;
const ADMIN_MAX_AGE_S = 7 * 24 * 3600;

/** How a request was identified. */
export interface RequestIdentity {
  visitorId: string;
  /** A `Set-Cookie` value to send when the visitor is new or its cookie was invalid. */
  setCookie?: string;
  admin: boolean;
}

/** Signs and checks visitor and owner cookies. */
export interface IdentityIssuer {
  /** Identifies a request from its headers, issuing a new visitor id when the cookie is absent or tampered. */
  identify(headers: { cookie?: string | undefined; authorization?: string | undefined }): RequestIdentity;
  /** True when `token` is the admin token (constant time); always false when none is configured. */
  isAdminToken(token: string): boolean;
  /** A `Set-Cookie` value that logs the owner in on this browser. */
  adminCookie(now?: number): string;
  /** The public alias of a visitor: shown to other people instead of the id behind its cookie. */
  publicId(visitorId: string): string;
}

/** True for ids made by the identity issuer (`v_` and 20 URL-safe characters). */
export const isVisitorId = (id: string): boolean => VISITOR_ID.test(id);

/**
 * Creates the identity issuer. Visitor cookie: `v_<random>.<HMAC>`. Owner cookie: `<issuedAt>.<HMAC>`
 * keyed by both the cookie secret and the admin token, so changing either logs the owner out.
 *
 * @param options - secrets and cookie flags
 */
export function createIdentityIssuer(options: {
  cookieSecret: string;
  adminToken: string | undefined;
  secureCookies: boolean;
}): IdentityIssuer {
  const { cookieSecret, adminToken, secureCookies } = options;
  const adminKey =
    adminToken === undefined
      ? undefined
      : createHmac('sha256', cookieSecret).update(`admin-key\0${adminToken}`).digest('base64url');

  const isAdminToken = (token: string): boolean =>
    adminToken !== undefined && token.length > 0 && secretsEqual(token, adminToken);

  const adminFromCookie = (value: string | undefined, now: number): boolean => {
    if (adminKey === undefined || value === undefined) return false;
    const issued = verifySignedValue(adminKey, 'admin', value);
    if (issued === undefined || !/^\d{1,15}$/.test(issued)) return false;
    const age = now - Number(issued);
    return age >= -60_000 && age <= ADMIN_MAX_AGE_S * 1000;
  };

  return {
    identify(headers) {
      const cookies = parseCookies(headers.cookie);
      const now = Date.now();
      const signed = cookies.get(VISITOR_COOKIE);
      const known = signed === undefined ? undefined : verifySignedValue(cookieSecret, 'visitor', signed);
      const bearer = /^Bearer\s+(\S+)$/i.exec(headers.authorization ?? '')?.[1];
      const admin =
        (bearer !== undefined && isAdminToken(bearer)) || adminFromCookie(cookies.get(ADMIN_COOKIE), now);
      if (known !== undefined && isVisitorId(known)) return { visitorId: known, admin };
      const visitorId = `v_${randomId(15)}`;
      const setCookie = serializeCookie(VISITOR_COOKIE, signValue(cookieSecret, 'visitor', visitorId), {
        maxAgeSeconds: VISITOR_MAX_AGE_S,
        sameSite: 'Lax',
        secure: secureCookies,
      });
      return { visitorId, setCookie, admin };
    },
    isAdminToken,
    adminCookie(now = Date.now()) {
      if (adminKey === undefined) {
        throw new ColloquyError(
          'INVALID_ARGUMENT',
          'No admin token is configured; set the adminToken option first.',
        );
      }
      return serializeCookie(ADMIN_COOKIE, signValue(adminKey, 'admin', String(now)), {
        maxAgeSeconds: ADMIN_MAX_AGE_S,
        sameSite: 'Strict',
        secure: secureCookies,
      });
    },
    publicId(visitorId) {
      return `u_${createHmac('sha256', cookieSecret).update(`public\0${visitorId}`).digest('hex').slice(0, 12)}`;
    },
  };
}
