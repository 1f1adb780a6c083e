import { join } from 'node:path';
import type { Logger, PairingAccess } from '@colloquy/core';
import type { PairingRecord } from '@colloquy/core/gateway';
import { PAIRING_CODE_TTL_MS } from '@colloquy/core/internal';
import { nodeStateFs, readFileIfExists, type StateFs } from './atomic-file.js';

/** Where versions before the Store kept WhatsApp pairing state, inside the plugin's `stateDir`. */
export const LEGACY_PAIRING_FILE = 'pairing.json';

interface LegacyPairings {
  pending?: { code: string; peerId: string; jid: string; name?: string; createdAt: number }[];
  approved?: { peerId: string; name?: string; approvedAt: number }[];
}

/**
 * Moves an old `pairing.json` into the Store, once, for one account: approvals and unexpired
 * codes are adopted (a peer the Store already knows keeps its Store record), then the file is
 * renamed to `pairing.json.imported`. A damaged file is left in place and reported.
 *
 * @returns how many records were adopted
 */
export async function importLegacyPairingFile(
  stateDir: string,
  accountId: string,
  pairing: PairingAccess,
  log: Logger,
  fs: StateFs = nodeStateFs,
  now = Date.now(),
): Promise<number> {
  const file = join(stateDir, LEGACY_PAIRING_FILE);
  const text = await readFileIfExists(file, fs);
  if (text === undefined) return 0;
  let legacy: LegacyPairings;
  try {
    legacy = JSON.parse(text) as LegacyPairings;
  } catch (error) {
    log.warn(
      { file, err: (error as Error).message },
      'the old WhatsApp pairing file is not valid JSON; fix or delete it, then restart to import it',
    );
    return 0;
  }
  const records: Omit<PairingRecord, 'channel'>[] = [
    ...(legacy.approved ?? []).map((peer) => ({
      accountId,
      peerId: peer.peerId,
      status: 'approved' as const,
      createdAt: peer.approvedAt,
      approvedAt: peer.approvedAt,
      ...(peer.name !== undefined ? { displayName: peer.name } : {}),
    })),
    ...(legacy.pending ?? [])
      .filter((p) => now - p.createdAt < PAIRING_CODE_TTL_MS)
      .map((p) => ({
        accountId,
        peerId: p.peerId,
        status: 'pending' as const,
        code: p.code,
        createdAt: p.createdAt,
        expiresAt: p.createdAt + PAIRING_CODE_TTL_MS,
        meta: { jid: p.jid },
        ...(p.name !== undefined ? { displayName: p.name } : {}),
      })),
  ];
  let adopted = 0;
  for (const record of records) if (await pairing.adopt(record)) adopted++;
  await fs.rename(file, `${file}.imported`);
  log.info({ file, adopted }, 'moved the old WhatsApp pairing file into the store');
  return adopted;
}
