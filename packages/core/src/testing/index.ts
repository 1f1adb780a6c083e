// @colloquy/core/testing: tools for testing Colloquy implementations. Imports vitest where a suite needs it.

export type { StoreConformanceOptions } from './store-conformance.js';
// --- store conformance ---
export { makeRunRecord, makeSessionRecord, runStoreConformance } from './store-conformance.js';
