import {
  type ChannelPlugin,
  type ColloquyConfig,
  type ColloquyConfigInput,
  resolveConfig,
} from '@colloquy/core';
import { createRuntime, type Runtime } from '@colloquy/runtime';
import { openPostgresStore, type PostgresStore } from '@colloquy/store-postgres';
import { createScriptedModel, type ScriptedModel, type ScriptFn } from '@colloquy/testkit';
import { createPostgresCluster, type PostgresCluster } from '../../src/index.js';

/** One runtime of a test cluster: its store and cluster member on the shared database, and its model. */
export interface Instance {
  runtime: Runtime;
  config: ColloquyConfig;
  store: PostgresStore;
  cluster: PostgresCluster;
  model: ScriptedModel;
}

/** Options of {@link startInstance}. */
export interface InstanceOptions {
  /** How long the default model takes to answer. Default 15 ms. */
  delayMs?: number;
  plugins?: ChannelPlugin[];
  /** The model's script. Default: answers `re: <last message>` after `delayMs`. */
  script?: ScriptFn;
  /** Added to the shared settings (scripted model, lanes main 3, subagent 3, cron 1). */
  config?: ColloquyConfigInput;
  /** Wraps the store the runtime is given (the instance's `store` stays the one opened). */
  wrapStore?: (store: PostgresStore) => PostgresStore;
}

const running: Instance[] = [];

/**
 * Starts a runtime on the shared database `url`, as one instance of a cluster. Stop the instances
 * a test started with {@link stopInstances}.
 *
 * @param url - the database (store and cluster)
 * @param options - model, plugins and settings
 * @returns the started instance
 */
export async function startInstance(url: string, options: InstanceOptions = {}): Promise<Instance> {
  const { delayMs = 15, plugins = [], script, config: extra = {}, wrapStore = (store) => store } = options;
  const store = await openPostgresStore({ url });
  const cluster = await createPostgresCluster({ url, reapIntervalMs: 200, leaseRetryMs: 100 });
  const model = createScriptedModel(
    script ??
      ((request) => {
        const last = request.messages.at(-1);
        const text = typeof last?.content === 'string' ? last.content : 'wake';
        return { text: `re: ${text}`, delayMs };
      }),
  );
  const config = resolveConfig({
    ...extra,
    agents: { ...extra.agents, defaults: { ...extra.agents?.defaults, model: 'scripted/test' } },
    runtime: { ...extra.runtime, lanes: { main: 3, subagent: 3, cron: 1, ...extra.runtime?.lanes } },
  });
  const runtime = createRuntime({
    config,
    store: wrapStore(store),
    cluster,
    plugins,
    models: (ref) => (ref.startsWith('scripted/') ? { provider: model, modelId: 'test' } : undefined),
  });
  await runtime.start();
  const instance = { runtime, config, store, cluster, model };
  running.push(instance);
  return instance;
}

/** Shuts down every instance started since the last call (200 ms drain). */
export async function stopInstances(): Promise<void> {
  await Promise.allSettled(running.splice(0).map((i) => i.runtime.shutdown({ drainMs: 200 })));
}
