import type { ColloquyConfig, SessionRecord } from '@colloquy/core';
import { agentConfigFor } from '@colloquy/core/internal';
import type { ModelResolver, ModelRouterLike, ResolvedModel } from '../runtime/runtime-options.js';

/** The model a run will use, or why there is none. */
export type ModelSelection =
  | ({ ok: true; modelRef: string } & ResolvedModel)
  | { ok: false; modelRef?: string; error: string };

/**
 * The `provider/model` reference a session runs: `session.model`, else its agent's model, else
 * `agents.defaults.model`.
 *
 * @param session - the session
 * @param config - the resolved config
 * @returns the reference, or `undefined` when none is configured
 */
export function modelRefFor(
  session: Pick<SessionRecord, 'model' | 'agentId'>,
  config: ColloquyConfig,
): string | undefined {
  return session.model ?? agentConfigFor(config, session.agentId)?.model ?? config.agents.defaults.model;
}

/**
 * Looks a reference up in the resolver.
 *
 * @param resolver - the runtime's `models` option (function or map)
 * @param modelRef - `provider/model`
 * @returns the provider and model id, or `undefined` when unknown
 */
export function lookupModel(
  resolver: ModelResolver | undefined,
  modelRef: string,
): ResolvedModel | undefined {
  if (!resolver) return undefined;
  if (typeof resolver === 'function') return resolver(modelRef);
  if (isRouter(resolver)) {
    if (!resolver.has(modelRef)) return undefined;
    const slash = modelRef.indexOf('/');
    return { provider: resolver.providerFor(modelRef), modelId: modelRef.slice(slash + 1) };
  }
  return resolver.get(modelRef);
}

function isRouter(resolver: ModelResolver): resolver is ModelRouterLike {
  return typeof (resolver as Partial<ModelRouterLike>).providerFor === 'function';
}

/**
 * Picks the model for a session's run, with a message that tells the user how to fix a missing or
 * unknown model.
 *
 * @param session - the session
 * @param config - the resolved config
 * @param resolver - the runtime's `models` option
 * @returns the selection
 */
export function selectModel(
  session: Pick<SessionRecord, 'model' | 'agentId'>,
  config: ColloquyConfig,
  resolver: ModelResolver | undefined,
): ModelSelection {
  const modelRef = modelRefFor(session, config);
  if (!modelRef) {
    return {
      ok: false,
      error:
        'No model is configured. Set agents.defaults.model (e.g. "openai/gpt-4o-mini") and the provider under ' +
        'models.providers in the config, then send the message again.',
    };
  }
  let found: ResolvedModel | undefined;
  try {
    found = lookupModel(resolver, modelRef);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    return { ok: false, modelRef, error: `The model "${modelRef}" cannot be used: ${reason}` };
  }
  if (!found) {
    const provider = modelRef.split('/')[0] ?? modelRef;
    return {
      ok: false,
      modelRef,
      error:
        `The model "${modelRef}" is not available. Add a provider "${provider}" under models.providers in the ` +
        'config, or set agents.defaults.model to a model whose provider is there.',
    };
  }
  return { ok: true, modelRef, ...found };
}
