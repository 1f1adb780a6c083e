import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from '@colloquy/core';
import type { SessionRow } from '../protocol/frames.js';
import type { AddressLimits } from '../security/address-limits.js';
import type { IdentityIssuer } from '../security/identity.js';
import { renderPageHtml } from './page-html.js';
import { setSecurityHeaders } from './security-headers.js';
import type { StaticAsset } from './static-assets.js';

/** What the HTTP side needs. */
export interface HttpHandlerOptions {
  identity: IdentityIssuer;
  assets: ReadonlyMap<string, StaticAsset>;
  title: string;
  sessionRows: () => Promise<{ total: number; sessions: SessionRow[] } | undefined>;
  /** Limits per client address: the page mints visitor identities too. */
  limits: AddressLimits;
  /** The client address of a request (see `clientAddressOf`). */
  addressOf: (req: IncomingMessage) => string;
  /** What is wrong with the instance, for `/healthz` (see `WebChatPluginOptions.health`). */
  health: () => readonly string[];
  log: Logger;
}

/**
 * The HTTP routes: `/` (the page; `?admin=<token>` logs the owner in), `/static/*` (the bundle),
 * `/api/sessions` (the owner's session list as JSON) and `/healthz` (200 `ok`, or 503 naming what is wrong).
 *
 * @param options - identity, assets and the session source
 * @returns a `request` listener for `node:http`
 */
export function createHttpHandler(
  options: HttpHandlerOptions,
): (req: IncomingMessage, res: ServerResponse) => void {
  const { identity, assets, log } = options;
  const page = Buffer.from(renderPageHtml(options.title));

  const send = (
    req: IncomingMessage,
    res: ServerResponse,
    status: number,
    type: string,
    body: string | Buffer,
    cache = 'no-store',
  ): void => {
    const bytes = typeof body === 'string' ? Buffer.from(body) : body;
    res.writeHead(status, { 'Content-Type': type, 'Content-Length': bytes.length, 'Cache-Control': cache });
    res.end(req.method === 'HEAD' ? undefined : bytes);
  };
  const json = (req: IncomingMessage, res: ServerResponse, status: number, value: unknown): void =>
    send(req, res, status, 'application/json; charset=utf-8', JSON.stringify(value));

  const servePage = (req: IncomingMessage, res: ServerResponse, url: URL): void => {
    const who = identity.identify(req.headers);
    const refusal = who.setCookie ? options.limits.newVisitor(options.addressOf(req)) : undefined;
    if (refusal) {
      res.setHeader('Retry-After', '60');
      send(req, res, refusal.status, 'text/plain; charset=utf-8', `${refusal.message}\n`);
      return;
    }
    const cookies: string[] = who.setCookie ? [who.setCookie] : [];
    const token = url.searchParams.get('admin');
    if (token !== null) {
      if (!identity.isAdminToken(token)) {
        log.warn({ path: url.pathname }, 'webchat: refused an owner login with a wrong admin token');
        res.setHeader('Set-Cookie', cookies);
        send(
          req,
          res,
          401,
          'text/plain; charset=utf-8',
          'Invalid admin token. Open the page without ?admin=.\n',
        );
        return;
      }
      cookies.push(identity.adminCookie());
      url.searchParams.delete('admin');
      res.setHeader('Set-Cookie', cookies);
      res.writeHead(303, { Location: `./${url.search}`, 'Cache-Control': 'no-store', 'Content-Length': 0 });
      res.end();
      return;
    }
    if (cookies.length > 0) res.setHeader('Set-Cookie', cookies);
    send(req, res, 200, 'text/html; charset=utf-8', page);
  };

  const serveSessions = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    if (!identity.identify(req.headers).admin) {
      res.setHeader('WWW-Authenticate', 'Bearer realm="colloquy"');
      json(req, res, 401, {
        error: { code: 'unauthorized', message: 'Send Authorization: Bearer <admin token>.' },
      });
      return;
    }
    const rows = await options.sessionRows();
    if (!rows) {
      json(req, res, 503, {
        error: { code: 'unavailable', message: 'No gateway is attached to the web chat.' },
      });
      return;
    }
    json(req, res, 200, { now: Date.now(), ...rows });
  };

  return (req, res) => {
    setSecurityHeaders(res);
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.setHeader('Allow', 'GET, HEAD');
      send(req, res, 405, 'text/plain; charset=utf-8', 'Method not allowed.\n');
      return;
    }
    let url: URL;
    try {
      url = new URL(req.url ?? '/', 'http://webchat.invalid');
    } catch {
      send(req, res, 400, 'text/plain; charset=utf-8', 'Bad request.\n');
      return;
    }
    const asset = url.pathname.startsWith('/static/') ? assets.get(url.pathname) : undefined;
    if (asset) {
      send(req, res, 200, asset.contentType, asset.body, 'public, max-age=300');
    } else if (url.pathname === '/' || url.pathname === '/index.html') {
      servePage(req, res, url);
    } else if (url.pathname === '/api/sessions') {
      serveSessions(req, res).catch((error: unknown) => {
        log.warn({ err: error }, 'webchat: /api/sessions failed');
        if (!res.headersSent)
          json(req, res, 500, { error: { code: 'internal', message: 'Listing failed.' } });
      });
    } else if (url.pathname === '/healthz') {
      const problems = options.health();
      if (problems.length === 0) send(req, res, 200, 'text/plain; charset=utf-8', 'ok\n');
      else send(req, res, 503, 'text/plain; charset=utf-8', `unhealthy: ${problems.join(' ')}\n`);
    } else {
      send(req, res, 404, 'text/plain; charset=utf-8', 'Not found.\n');
    }
  };
}
