import {
  type AgentTool,
  type ColloquyConfigInput,
  createSessionTools,
  type Gateway,
  resolveConfig,
  type SessionRecord,
} from '@colloquy/core';
import type { Store } from '@colloquy/core/store';
import { lastUserText, makeSessionRecord, type ScriptFn, type ScriptStep } from '@colloquy/testkit';
import { type Harness, type HarnessOptions, startHarness } from '../support/harness.js';

/** The scripted behaviour of every agent in these suites. */
export interface AgentBehaviour {
  /** The reply to a normal message (default `echo: <text>`). */
  reply?: (text: string, system: string, lastRole: string) => ScriptStep;
  /** The reply in the reply-back loop (default `REPLY_SKIP`). */
  replyBack?: (text: string, turn: number) => string;
  /** The reply to the announce prompt (default `ANNOUNCE_SKIP`). */
  announce?: string;
}

/** The marker the runtime puts before inter-session messages in the prompt. */
const INTER_SESSION_PREFIX = /^\[Message from session [^\]]*\]\n/;

/** A model script that answers by role: announce prompt, reply-back turn, or a plain message. */
export function agentScript(behaviour: AgentBehaviour = {}): ScriptFn {
  let replyBackTurns = 0;
  return (request) => {
    const text = (lastUserText(request) ?? '').replace(INTER_SESSION_PREFIX, '');
    if (text.includes('Write a short announcement')) return behaviour.announce ?? 'ANNOUNCE_SKIP';
    if (request.system.includes('reply-back exchange')) {
      replyBackTurns++;
      return behaviour.replyBack?.(text, replyBackTurns) ?? 'REPLY_SKIP';
    }
    const lastRole = request.messages.at(-1)?.role ?? 'user';
    return behaviour.reply?.(text, request.system, lastRole) ?? `echo: ${text}`;
  };
}

export const T0 = Date.now();

/** Puts a session straight into the store. */
export async function seed(
  store: Store,
  key: string,
  overrides: Partial<SessionRecord> = {},
): Promise<SessionRecord> {
  const kind = key.includes(':subagent:')
    ? 'subagent'
    : key.endsWith(':main')
      ? 'main'
      : key.includes(':group:')
        ? 'group'
        : key.includes(':dm:')
          ? 'dm'
          : 'other';
  const record = makeSessionRecord(key, { kind, createdAt: T0, updatedAt: T0, ...overrides });
  await store.putSession(record);
  return record;
}

/** A harness plus a way to get the session tools of any requester. */
export interface ToolsHarness extends Harness {
  tools(requesterKey: string, options?: { sandboxed?: boolean; hop?: number; gateway?: Gateway }): ToolSet;
}

/** The session tools of one requester, by name. */
export type ToolSet = Record<string, AgentTool>;

/** Boots a runtime whose main/dm/group sessions get the session tools, with the scripted agent behaviour. */
export async function startToolsHarness(
  config: ColloquyConfigInput = {},
  behaviour: AgentBehaviour = {},
  options: HarnessOptions = {},
): Promise<ToolsHarness> {
  const resolved = resolveConfig({
    ...config,
    agents: { ...config.agents, defaults: { model: 'scripted/test', ...config.agents?.defaults } },
  });
  const harness = await startHarness({
    script: agentScript(behaviour),
    config,
    ...options,
  });
  return {
    ...harness,
    tools(requesterKey, toolOptions = {}) {
      const agentId = /^agent:([^:]+):/.exec(requesterKey)?.[1] ?? 'main';
      const list = createSessionTools({
        requesterKey,
        agentId,
        sandboxed: toolOptions.sandboxed ?? false,
        config: resolved,
        gateway: toolOptions.gateway ?? harness.runtime.gateway,
        hop: toolOptions.hop ?? 0,
      });
      return Object.fromEntries(list.map((tool) => [tool.name, tool]));
    },
  };
}

/** Runs a tool and returns its JSON details, checking the text content is the same JSON. */
export async function call<T = Record<string, unknown>>(
  tool: AgentTool | undefined,
  args: unknown,
): Promise<T> {
  if (!tool) throw new Error('no such tool');
  const result = await tool.execute('call-test', args as never);
  const parsed = JSON.parse(result.content[0].text) as T;
  return parsed;
}
