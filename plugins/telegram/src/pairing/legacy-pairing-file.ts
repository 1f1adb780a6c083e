import { readFile, rename } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger, PairingAccess } from '@colloquy/core';

/** Where versions before the Store kept Telegram pairing state, inside the plugin's `stateDir`. */
export const LEGACY_PAIRING_FILE = 'telegram-pairing.json';

interface LegacyState {
  pending?: {
    code: string;
    accountId: string;
    userId: string;
    username?: string;
    name?: string;
    createdAt: number;
    expiresAt: number;
    notifiedAt?: number;
  }[];
  approved?: { accountId: string; userId: string; username?: string; name?: string; approvedAt: number }[];
}

/**
 * Moves an old `telegram-pairing.json` into the Store, once: approvals and unexpired codes are
 * adopted (a peer the Store already knows keeps its Store record), then the file is renamed to
 * `telegram-pairing.json.imported`. A damaged file is left in place and reported, never deleted.
 *
 * @returns how many records were adopted
 */
export async function importLegacyPairingFile(
  stateDir: string,
  pairing: PairingAccess,
  log: Logger,
  now = Date.now(),
): Promise<number> {
  const file = join(stateDir, LEGACY_PAIRING_FILE);
  let state: LegacyState;
  try {
    state = JSON.parse(await readFile(file, 'utf8')) as LegacyState;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 0;
    log.warn(
      { file, err: (error as Error).message },
      'the old Telegram pairing file could not be read; fix or delete it, then restart to import it',
    );
    return 0;
  }
  let adopted = 0;
  for (const user of state.approved ?? []) {
    const inserted = await pairing.adopt({
      accountId: user.accountId,
      peerId: user.userId,
      status: 'approved',
      createdAt: user.approvedAt,
      approvedAt: user.approvedAt,
      ...(user.name !== undefined ? { displayName: user.name } : {}),
      ...(user.username !== undefined ? { meta: { username: user.username } } : {}),
    });
    if (inserted) adopted++;
  }
  for (const request of (state.pending ?? []).filter((p) => p.expiresAt > now)) {
    const inserted = await pairing.adopt({
      accountId: request.accountId,
      peerId: request.userId,
      status: 'pending',
      code: request.code,
      createdAt: request.createdAt,
      expiresAt: request.expiresAt,
      ...(request.notifiedAt !== undefined ? { notifiedAt: request.notifiedAt } : {}),
      ...(request.name !== undefined ? { displayName: request.name } : {}),
      ...(request.username !== undefined ? { meta: { username: request.username } } : {}),
    });
    if (inserted) adopted++;
  }
  await rename(file, `${file}.imported`);
  log.info({ file, adopted }, 'moved the old Telegram pairing file into the store');
  return adopted;
}
