import { createSessionTools } from '@colloquy/core';
import type { ToolsHook } from './runtime-options.js';

/**
 * The runtime's default tools: the session tools of `@colloquy/core`, built for the session
 * that runs (its key, agent, sandbox flag and inter-session hop count). Sub-agent runs get them
 * filtered by `tools.subagents.tools` (by default: none of them).
 *
 * Compose it with your own tools:
 * @example
 * ```ts
 * createRuntime({ config, store, tools: (ctx) => [...sessionToolsHook(ctx), weatherTool] });
 * ```
 */
export const sessionToolsHook: ToolsHook = ({ session, run, gateway, config, now, track }) =>
  createSessionTools({
    requesterKey: session.key,
    agentId: session.agentId,
    sandboxed: session.sandboxed ?? false,
    config,
    gateway,
    hop: run.provenance?.hop ?? 0,
    now,
    track,
  });
