export type { BackoffOptions } from './backoff.js';
export { backoffDelay, sleep } from './backoff.js';
export type { ReceiveUntilStoredOptions } from './receive-until-stored.js';
export { receiveUntilStored } from './receive-until-stored.js';
