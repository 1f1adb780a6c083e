export type { BackoffOptions } from './backoff.js';
export { backoffDelay, sleep } from './backoff.js';
