import { createHash } from 'node:crypto';

/** Tokens in use by a poller or webhook in this process, by token hash: the holder's description. */
const claims = new Map<string, { holder: string }>();

function tokenKey(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/**
 * Claims a bot token for one receiver in this process. Two pollers on one token would steal each
 * other's updates, so the second claim fails and names the holder.
 *
 * @param token - the bot token (only its hash is kept)
 * @param holder - a description of the claimant, e.g. `account "main"`
 * @returns `{ ok: true, release }`, or `{ ok: false, holder }` naming who holds it
 */
export function claimToken(
  token: string,
  holder: string,
): { ok: true; release: () => void } | { ok: false; holder: string } {
  const key = tokenKey(token);
  const current = claims.get(key);
  if (current !== undefined) return { ok: false, holder: current.holder };
  const claim = { holder };
  claims.set(key, claim);
  let released = false;
  return {
    ok: true,
    release: () => {
      if (released) return;
      released = true;
      if (claims.get(key) === claim) claims.delete(key);
    },
  };
}
