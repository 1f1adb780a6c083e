import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type ColloquyConfigInput, resolveConfig } from '@colloquy/core';
import { MemoryStore, type Store } from '@colloquy/core/store';
import { openPostgresStore } from '@colloquy/store-postgres';
import { openSqliteStore } from '@colloquy/store-sqlite';
import {
  createMemoryChannel,
  createScriptedModel,
  type MemoryChannel,
  type MemoryChannelOptions,
  type ScriptedModel,
  type ScriptFn,
  type ScriptStep,
} from '@colloquy/testkit';
import { createTestDatabase } from '@colloquy/testkit/postgres';
import { inject } from 'vitest';
import { createRuntime, type Runtime, type RuntimeOptions } from '../../src/index.js';

/** The stores every gateway suite runs against. */
export const STORE_KINDS = ['memory', 'sqlite', 'postgres'] as const;
export type StoreKind = (typeof STORE_KINDS)[number];

/**
 * A store of the given kind: sqlite ones live in a temp dir removed by `cleanup`; postgres ones are a
 * fresh database on the run's throwaway server (see postgres-global-setup.ts). `file` reopens a store
 * made before (the sqlite file, or the postgres database URL), as a restart would.
 */
export async function makeStore(
  kind: StoreKind,
  file?: string,
): Promise<{ store: Store; file?: string; cleanup(): void }> {
  if (kind === 'memory') return { store: new MemoryStore(), cleanup: () => {} };
  if (kind === 'postgres') {
    const url = file ?? (await createTestDatabase(inject('postgresUrl')));
    return { store: await openPostgresStore({ url }), file: url, cleanup: () => {} };
  }
  const dir = file ? undefined : mkdtempSync(join(tmpdir(), 'colloquy-runtime-'));
  const path = file ?? join(dir!, 'colloquy.db');
  const store = openSqliteStore({ file: path });
  return {
    store,
    file: path,
    cleanup: () => {
      if (dir) rmSync(dir, { recursive: true, force: true });
    },
  };
}

export interface Harness {
  runtime: Runtime;
  model: ScriptedModel;
  channel: MemoryChannel;
  store: Store;
  /** Shuts the runtime down (closing the store) and removes temp files. */
  close(): Promise<void>;
}

export interface HarnessOptions extends Partial<Omit<RuntimeOptions, 'config' | 'store'>> {
  script?: readonly ScriptStep[] | ScriptFn;
  config?: ColloquyConfigInput;
  storeKind?: StoreKind;
  store?: Store;
  channel?: MemoryChannelOptions;
  start?: boolean;
}

/** Boots a runtime with a scripted model (`scripted/test` is the default model) and a memory channel. */
export async function startHarness(options: HarnessOptions = {}): Promise<Harness> {
  const {
    script = [],
    config: configInput = {},
    storeKind = 'memory',
    channel: channelOptions,
    start = true,
    ...rest
  } = options;
  const made = options.store ? { store: options.store, cleanup: () => {} } : await makeStore(storeKind);
  const model = createScriptedModel(script);
  const channel = createMemoryChannel(channelOptions);
  const config = resolveConfig({
    ...configInput,
    agents: { ...configInput.agents, defaults: { model: 'scripted/test', ...configInput.agents?.defaults } },
  });
  const runtime = createRuntime({
    config,
    store: made.store,
    plugins: [channel],
    models: (ref) =>
      ref.startsWith('scripted/') ? { provider: model, modelId: ref.slice('scripted/'.length) } : undefined,
    ...rest,
  });
  if (start) await runtime.start();
  return {
    runtime,
    model,
    channel,
    store: made.store,
    async close() {
      await runtime.shutdown({ drainMs: 200 });
      made.cleanup();
    },
  };
}

/** Polls until `predicate` holds (2 ms steps), failing after `timeoutMs`. */
export async function waitFor(
  predicate: () => boolean | Promise<boolean>,
  timeoutMs = 3000,
  what = 'condition',
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await predicate())) {
    if (Date.now() > deadline) throw new Error(`waitFor: ${what} not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}
