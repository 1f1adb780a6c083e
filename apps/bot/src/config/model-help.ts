import { CLI } from '../cli/cli-name.js';
import { ENV } from './env-overlay.js';

/** The line before {@link MODEL_HELP} wherever a model is missing. */
export const MODEL_RESTART_HINT = 'To chat, restart the bot with a model, for example:';

/**
 * How to configure a model, in a few lines (shown at start and in reply to chat messages while no
 * model is set).
 */
export const MODEL_HELP = [
  `  ${ENV.model}=openai/gpt-4o-mini ${ENV.openaiApiKey}=sk-...        (OpenAI)`,
  `  ${ENV.model}=local/llama3.2 ${ENV.openaiBaseUrl}=http://127.0.0.1:11434/v1   (Ollama or any OpenAI-compatible server)`,
  `  ${ENV.model}=anthropic/claude-sonnet-4-5 ${ENV.anthropicApiKey}=sk-ant-...   (Anthropic)`,
  `  or set agents.defaults.model and models.providers in colloquy.json5 (\`${CLI} init\` writes one).`,
].join('\n');

/**
 * The reply to a chat message when no usable model is configured.
 *
 * @param modelRef - the configured reference, when there is one
 * @param reason - why it cannot be used
 * @returns the reply
 */
export function noModelMessage(modelRef: string | undefined, reason: string): string {
  const head = modelRef
    ? `I cannot answer yet: ${reason}`
    : 'I cannot answer yet: no model is configured. Slash commands work (try /help).';
  return `${head}\n${MODEL_RESTART_HINT}\n${MODEL_HELP}`;
}
