/** Host names a loopback-bound web chat always answers to. */
const LOOPBACK_NAMES = ['localhost', '127.0.0.1', '::1'];
/** Bind addresses that mean every interface. */
const WILDCARD_HOSTS = new Set(['0.0.0.0', '::', '']);

/**
 * The host names the web chat accepts in a request's `Host` header, or `undefined` for any:
 * the configured `allowedHosts`; else, for a server bound to one address, that address plus the
 * loopback names; a server bound to every interface without `allowedHosts` accepts any host.
 *
 * @param bindHost - the address the server listens on
 * @param allowedHosts - the operator's list, when set
 */
export function acceptedHosts(
  bindHost: string,
  allowedHosts: readonly string[] | undefined,
): Set<string> | undefined {
  if (allowedHosts !== undefined) return new Set(allowedHosts.map(normalizeHostName));
  if (WILDCARD_HOSTS.has(bindHost)) return undefined;
  return new Set([normalizeHostName(bindHost), ...LOOPBACK_NAMES]);
}

/**
 * True when a `Host` header names an accepted host (the port is ignored). A page on another
 * domain that resolves to this machine (DNS rebinding) sends its own name here, and is refused.
 *
 * @param hostHeader - the request's `Host` header
 * @param accepted - from {@link acceptedHosts}; `undefined` accepts any
 */
export function isAcceptedHost(hostHeader: string | undefined, accepted: Set<string> | undefined): boolean {
  if (accepted === undefined) return true;
  if (hostHeader === undefined || hostHeader === '') return false;
  let name: string;
  try {
    name = new URL(`http://${hostHeader}`).hostname;
  } catch {
    return false;
  }
  return accepted.has(normalizeHostName(name));
}

function normalizeHostName(host: string): string {
  return host
    .trim()
    .toLowerCase()
    .replace(/^\[|\]$/g, '');
}
