import type { AgentTool } from '@colloquy/core';
import { LRUCache } from 'lru-cache';
import { estimateTokens } from './token-estimate.js';

// How many tokens of transcript history a turn's prompt may hold, and the estimates behind it. A turn
// builds its system prompt and its tools anew, but they are the same texts and schemas turn after turn,
// so their estimates are counted once and remembered.

/**
 * The history budget of a prompt: the context window minus the system prompt, the tools and a reserve
 * for the answer (a quarter of the window, at most 4,096 tokens).
 *
 * @param contextWindowTokens - `models.contextWindowTokens`
 * @param system - the system prompt
 * @param tools - the tools the model is offered
 * @returns the tokens left for history (may be negative: the newest message is sent all the same)
 */
export function historyTokenBudget(
  contextWindowTokens: number,
  system: string,
  tools: readonly AgentTool[],
): number {
  const reserve = Math.min(4096, Math.floor(contextWindowTokens / 4));
  return contextWindowTokens - systemTokens(system) - toolTokens(tools) - reserve;
}

const systemTokenCache = new LRUCache<string, number>({ max: 256 });

/** The system prompt's estimate, remembered for the 256 prompts used most recently. */
function systemTokens(system: string): number {
  let tokens = systemTokenCache.get(system);
  if (tokens === undefined) {
    tokens = estimateTokens(system);
    systemTokenCache.set(system, tokens);
  }
  return tokens;
}

/** A tool's estimate, with the name and description it was counted for. */
interface ToolTokens {
  name: string;
  description: string;
  tokens: number;
}

/** Keyed by the tool's parameter schema, an object each tool module builds once. */
const toolTokenCache = new WeakMap<object, ToolTokens>();

/** The tools' estimate: each one's name, description and parameter schema, and the JSON around them. */
function toolTokens(tools: readonly AgentTool[]): number {
  let total = 0;
  for (const tool of tools) {
    let cached = toolTokenCache.get(tool.parameters);
    if (cached === undefined || cached.name !== tool.name || cached.description !== tool.description) {
      // [{"name":...,"description":...,"parameters":...}]: about 10 tokens of JSON around them.
      const tokens =
        10 +
        estimateTokens(tool.name) +
        estimateTokens(tool.description) +
        estimateTokens(JSON.stringify(tool.parameters));
      cached = { name: tool.name, description: tool.description, tokens };
      toolTokenCache.set(tool.parameters, cached);
    }
    total += cached.tokens;
  }
  return total;
}
