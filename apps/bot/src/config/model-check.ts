import { isColloquyError } from '@colloquy/core';
import { createModelProvider, parseModelRef } from '@colloquy/runtime';
import { CLI } from '../cli/cli-name.js';
import { ENV, type Env, OPENAI_DEFAULT_BASE_URL } from './env-overlay.js';
import type { BotConfig } from './load-config.js';

/** A model setting that cannot work, and the one sentence that fixes it. */
export interface ModelProblem {
  /** The setting, e.g. `agents.defaults.model` or `models.providers.openai`. */
  path: string;
  /** The environment variables the value came from, when it came from the environment. */
  fromEnvironment?: string[];
  /** What is wrong and what to do. */
  message: string;
}

/**
 * Checks that every model the config names can be called: the reference is `provider/model`, the
 * provider is configured, and the provider has what it needs (a base URL, an API key for OpenAI or
 * Anthropic, a set `apiKeyEnv` variable). Nothing is sent to the provider. A problem with a value
 * that came from the environment names the variable, not the config file.
 *
 * @param config - the loaded config
 * @param env - the environment the providers read keys from
 * @returns the problems (empty when every model can work)
 * @example
 * ```ts
 * for (const problem of checkModels(config, process.env)) console.error(problem.message);
 * ```
 */
export function checkModels(config: BotConfig, env: Env): ModelProblem[] {
  const problems: ModelProblem[] = [];
  const checked = new Set<string>();
  const refs: [string, string | undefined][] = [
    ['agents.defaults.model', config.core.agents.defaults.model],
    ...config.core.agents.list.map((agent, i): [string, string | undefined] => [
      `agents.list[${i}].model`,
      agent.model,
    ]),
  ];
  for (const [path, ref] of refs) {
    if (ref === undefined) continue;
    const refVars = sourceOf(config, path);
    const setting = refVars ? `${refVars.join(' and ')}=${ref}` : `${path} "${ref}"`;
    let providerId: string;
    try {
      providerId = parseModelRef(ref).providerId;
    } catch {
      problems.push(
        problem(
          path,
          refVars,
          `${setting} is not a "provider/model" reference; write it as e.g. "openai/gpt-4o-mini".`,
        ),
      );
      continue;
    }
    const entry = config.core.models.providers[providerId];
    if (!entry) {
      problems.push(
        problem(
          path,
          refVars,
          `${setting} names the provider "${providerId}", which is not set up: ${providerFix(config, providerId)}`,
        ),
      );
      continue;
    }
    if (checked.has(providerId)) continue;
    checked.add(providerId);
    const providerPath = `models.providers.${providerId}`;
    const providerVars = sourceOf(config, providerPath);
    const missingKey = needsKey(entry) ? keyFix(providerId, providerVars) : undefined;
    try {
      createModelProvider(providerId, entry, { env });
    } catch (error) {
      if (!isColloquyError(error)) throw error;
      problems.push(problem(providerPath, providerVars, `${setting} cannot work: ${error.message}`));
      continue;
    }
    if (missingKey)
      problems.push(problem(providerPath, providerVars, `${setting} cannot work: ${missingKey}`));
  }
  return problems;
}

/** The settings the environment filled, by config path (`agents.defaults.model` -> `COLLOQUY_MODEL`). */
function sourceOf(config: BotConfig, path: string): string[] | undefined {
  const line = config.fromEnvironment.find((l) => l.startsWith(`${path} from `));
  return line?.slice(path.length + ' from '.length).split(' and ');
}

function problem(path: string, vars: string[] | undefined, message: string): ModelProblem {
  return { path, ...(vars ? { fromEnvironment: vars } : {}), message };
}

/** How to set up a provider that is missing. */
function providerFix(config: BotConfig, providerId: string): string {
  const known = Object.keys(config.core.models.providers);
  const where = config.file ? `in ${config.file}` : `in a config file (\`${CLI} init\` writes one)`;
  const env =
    providerId === 'anthropic'
      ? `set ${ENV.anthropicApiKey}`
      : `set ${ENV.openaiApiKey} (OpenAI) or ${ENV.openaiBaseUrl} (an OpenAI-compatible server such as Ollama)`;
  const others = known.length > 0 ? `, or use a model of ${known.map((k) => `"${k}"`).join(', ')}` : '';
  return `${env}, or add models.providers.${providerId} ${where}${others}.`;
}

/** An OpenAI-compatible provider at OpenAI itself, with no key: every call is refused. */
function needsKey(entry: { kind: string; baseURL?: string; apiKey?: string; apiKeyEnv?: string }): boolean {
  if (entry.kind !== 'openai-compatible' || entry.apiKey || entry.apiKeyEnv || !entry.baseURL) return false;
  try {
    return new URL(entry.baseURL).hostname === new URL(OPENAI_DEFAULT_BASE_URL).hostname;
  } catch {
    return false;
  }
}

function keyFix(providerId: string, vars: string[] | undefined): string {
  return vars
    ? `it needs an API key; set ${ENV.openaiApiKey}.`
    : `it needs an API key; set models.providers.${providerId}.apiKeyEnv (e.g. "${ENV.openaiApiKey}").`;
}
