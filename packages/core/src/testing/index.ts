// @colloquy/core/testing: tools for testing Colloquy implementations. The suites import vitest;
// for the test doubles alone, without vitest, import `@colloquy/core/testing/fakes`.

// --- test doubles (also at @colloquy/core/testing/fakes) ---
export * from './fakes.js';
export type { StoreConformanceOptions } from './store-conformance.js';
// --- store conformance ---
export { runStoreConformance } from './store-conformance.js';
