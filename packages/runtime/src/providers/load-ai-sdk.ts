/**
 * The AI SDK, loaded on first use: a process that never calls a model (the reference app with no
 * model configured, the CLI) does not pay its ~10 MB and ~250 ms start-up cost.
 */
type AiModule = typeof import('ai');

let ai: Promise<AiModule> | undefined;

/** Loads `ai` once and returns the module. */
export function loadAi(): Promise<AiModule> {
  ai ??= import('ai');
  return ai;
}
