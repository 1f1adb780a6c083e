import { describe, expect, it } from 'vitest';
import { parseCookies } from './cookies.js';
import { ADMIN_COOKIE, createIdentityIssuer, isVisitorId, VISITOR_COOKIE } from './identity.js';

const cookieSecret = 's'.repeat(40);
const issuer = createIdentityIssuer({ cookieSecret, adminToken: 'owner-token-1', secureCookies: false });

/** The `name=value` part of a Set-Cookie header, as a browser would send it back. */
const echo = (setCookie: string | undefined): string => (setCookie ?? '').split(';')[0]!;

describe('visitor identity', () => {
  it('issues a new visitor id with an HttpOnly signed cookie when none is sent', () => {
    const who = issuer.identify({});
    expect(isVisitorId(who.visitorId)).toBe(true);
    expect(who.setCookie).toMatch(
      new RegExp(`^${VISITOR_COOKIE}=v_[\\w-]{20}\\.[\\w-]+; Path=/; HttpOnly; SameSite=Lax`),
    );
    expect(who.admin).toBe(false);
  });

  it('keeps the same identity when the cookie comes back', () => {
    const first = issuer.identify({});
    const again = issuer.identify({ cookie: `other=1; ${echo(first.setCookie)}` });
    expect(again.visitorId).toBe(first.visitorId);
    expect(again.setCookie).toBeUndefined();
  });

  it('issues a fresh identity when the cookie was tampered with', () => {
    const first = issuer.identify({});
    const [, value] = echo(first.setCookie).split('=') as [string, string];
    const forged = `v_${'A'.repeat(20)}.${value.split('.')[1]}`;
    const again = issuer.identify({ cookie: `${VISITOR_COOKIE}=${forged}` });
    expect(again.visitorId).not.toBe(`v_${'A'.repeat(20)}`);
    expect(again.visitorId).not.toBe(first.visitorId);
    expect(again.setCookie).toBeDefined();
  });

  it('does not accept a cookie signed with another secret', () => {
    const other = createIdentityIssuer({
      cookieSecret: 't'.repeat(40),
      adminToken: undefined,
      secureCookies: false,
    });
    const first = other.identify({});
    const again = issuer.identify({ cookie: echo(first.setCookie) });
    expect(again.visitorId).not.toBe(first.visitorId);
  });

  it('gives each visitor a stable public alias that does not reveal its id', () => {
    const { visitorId } = issuer.identify({});
    expect(issuer.publicId(visitorId)).toBe(issuer.publicId(visitorId));
    expect(issuer.publicId(visitorId)).not.toContain(visitorId.slice(2));
    expect(issuer.publicId(visitorId)).toMatch(/^u_[0-9a-f]{12}$/);
  });

  it('marks cookies Secure when asked', () => {
    const secure = createIdentityIssuer({ cookieSecret, adminToken: 'owner-token-1', secureCookies: true });
    expect(secure.identify({}).setCookie).toMatch(/; Secure$/);
  });
});

describe('owner identity', () => {
  it('accepts the admin token as a Bearer header', () => {
    expect(issuer.identify({ authorization: 'Bearer owner-token-1' }).admin).toBe(true);
    expect(issuer.identify({ authorization: 'Bearer owner-token-2' }).admin).toBe(false);
    expect(issuer.identify({ authorization: 'Basic owner-token-1' }).admin).toBe(false);
  });

  it('accepts the signed owner cookie and refuses a forged or expired one', () => {
    const cookie = echo(issuer.adminCookie());
    expect(issuer.identify({ cookie }).admin).toBe(true);
    expect(issuer.identify({ cookie: `${ADMIN_COOKIE}=${Date.now()}.forged` }).admin).toBe(false);
    const old = echo(issuer.adminCookie(Date.now() - 8 * 24 * 3600 * 1000));
    expect(issuer.identify({ cookie: old }).admin).toBe(false);
  });

  it('logs the owner out when the admin token changes', () => {
    const cookie = echo(issuer.adminCookie());
    const rotated = createIdentityIssuer({ cookieSecret, adminToken: 'owner-token-2', secureCookies: false });
    expect(rotated.identify({ cookie }).admin).toBe(false);
  });

  it('has no owner at all without an admin token', () => {
    const open = createIdentityIssuer({ cookieSecret, adminToken: undefined, secureCookies: false });
    expect(open.isAdminToken('')).toBe(false);
    expect(open.identify({ authorization: 'Bearer undefined' }).admin).toBe(false);
    expect(() => open.adminCookie()).toThrow(expect.objectContaining({ code: 'INVALID_ARGUMENT' }));
  });
});

describe('cookie parsing', () => {
  it('reads the first value of each cookie and skips junk', () => {
    const cookies = parseCookies(' a=1; b = 2 ;junk; a=3; =x');
    expect(cookies.get('a')).toBe('1');
    expect(cookies.get('b')).toBe('2');
    expect(cookies.size).toBe(2);
  });
});
