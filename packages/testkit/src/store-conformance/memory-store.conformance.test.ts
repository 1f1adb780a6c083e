import { MemoryStore } from '@colloquy/core/store';
import { runStoreConformance } from './index.js';

// Core's reference store runs the suite here, since core cannot depend on the testkit.
runStoreConformance('MemoryStore', () => new MemoryStore());
