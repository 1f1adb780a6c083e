import { runStoreConformance } from '../testing/store-conformance.js';
import { MemoryStore } from './memory-store.js';

runStoreConformance('MemoryStore', () => new MemoryStore());
