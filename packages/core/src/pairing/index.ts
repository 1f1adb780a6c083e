export type { PairingAccess, PairingPeer, PairingRequestResult } from './pairing.js';
export {
  approvePairing,
  createPairingAccess,
  createPairingCode,
  listPairings,
  MAX_PENDING_PAIRINGS,
  normalizePairingCode,
  PAIRING_CODE_TTL_MS,
  requestPairing,
  revokePairing,
} from './pairing.js';
