import type { Env } from './env-overlay.js';

/** Setting names whose string value is a secret. */
export const SECRET_SETTING = /(token|secret|password|apikey|api_key)$/i;
/** Setting names that name an environment variable holding a secret (`tokenEnv`, `apiKeyEnv`). */
export const SECRET_VARIABLE_SETTING = /(token|secret|password|apikey)Env$/i;

const MIN_LENGTH = 6;
const MAX_DEPTH = 16;

/**
 * Every secret value the config holds, wherever it came from: settings named like a secret
 * (`token`, `secretToken`, `apiKey`, ...), the values of the variables that `tokenEnv` /
 * `apiKeyEnv` settings name, and the password of a database URL. They all go into
 * `redaction.secrets`, so no transcript output, log line or CLI listing shows them.
 *
 * @param input - the config as loaded (file plus environment), before validation
 * @param env - the environment the `*Env` settings are read from
 * @returns the secret values of at least 6 characters (shorter ones would redact ordinary text)
 */
export function collectConfigSecrets(input: unknown, env: Env): string[] {
  const found = new Set<string>();
  const visit = (value: unknown, depth: number): void => {
    if (depth > MAX_DEPTH || typeof value !== 'object' || value === null) return;
    for (const [name, inner] of Object.entries(value)) {
      if (typeof inner === 'string') {
        if (SECRET_SETTING.test(name)) found.add(inner);
        else if (SECRET_VARIABLE_SETTING.test(name) && env[inner]) found.add(env[inner]!.trim());
        else if (name === 'url') {
          const password = urlPassword(inner);
          if (password) found.add(password);
        }
      } else {
        visit(inner, depth + 1);
      }
    }
  };
  visit(input, 0);
  return [...found].filter((secret) => secret.length >= MIN_LENGTH);
}

function urlPassword(url: string): string | undefined {
  try {
    const password = decodeURIComponent(new URL(url).password);
    return password || undefined;
  } catch {
    return undefined;
  }
}
