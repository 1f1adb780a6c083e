import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  type AgentTool,
  type ColloquyConfig,
  type ColloquyConfigInput,
  createSessionTools,
  resolveConfig,
  type SessionRecord,
  toolResult,
} from '@colloquy/core';
import type { ModelRequest } from '@colloquy/core/model';
import type { OutboxEntry, Store } from '@colloquy/core/store';
import { makeSessionRecord, messageText, type ScriptFn } from '@colloquy/testkit';
import { Type } from '@sinclair/typebox';
import { type Harness, type HarnessOptions, startHarness, waitFor } from '../support/harness.js';

export const MAIN = 'agent:main:main';
/** The main session's chat on the memory channel. */
export const MAIN_CHAT = { channel: 'memory', to: 'user-1', accountId: 'default' } as const;

/** A session tool set by name. */
export type ToolSet = Record<string, AgentTool>;

export interface SubagentHarness extends Harness {
  config: ColloquyConfig;
  /** The root the runtime writes attachments under (a temp dir removed by `close`). */
  workspaceDir: string;
  /** The session tools of any requester, as the runtime gives them to its runs. */
  tools(requesterKey: string, options?: { sandboxed?: boolean }): Promise<ToolSet>;
}

export interface SubagentHarnessOptions extends Omit<HarnessOptions, 'script' | 'config'> {
  config?: ColloquyConfigInput;
  script: ScriptFn;
}

/** A tool that waits `ms` (aborts cut it short), so a test can hold a run between two model steps. */
export const waitTool: AgentTool = {
  name: 'wait',
  description: 'Waits for ms milliseconds.',
  parameters: Type.Object({ ms: Type.Number() }),
  execute: async (_id, args, signal) => {
    const { ms } = args as { ms: number };
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      signal?.addEventListener('abort', () => {
        clearTimeout(timer);
        resolve();
      });
    });
    return toolResult({ status: 'ok', waited: ms });
  },
};

/** A tool that returns its input, for tool-result announces. */
export const echoTool: AgentTool = {
  name: 'echo',
  description: 'Echoes text.',
  parameters: Type.Object({ text: Type.String() }),
  execute: async (_id, args) => toolResult({ echoed: (args as { text: string }).text }),
};

/**
 * Boots a runtime (scripted model `scripted/test`, memory channel) in which every session's runs
 * get the session tools plus `wait` and `echo`; the runtime itself trims sub-agents' tools.
 */
export async function startSubagentHarness(options: SubagentHarnessOptions): Promise<SubagentHarness> {
  const { config: input = {}, script, ...rest } = options;
  const workspaceDir = mkdtempSync(join(tmpdir(), 'colloquy-subagents-'));
  const config = resolveConfig({
    ...input,
    agents: { ...input.agents, defaults: { model: 'scripted/test', ...input.agents?.defaults } },
  });
  const toolsOf = (session: SessionRecord, gateway: Harness['runtime']['gateway'], sandboxed?: boolean) => [
    ...createSessionTools({
      requesterKey: session.key,
      agentId: session.agentId,
      sandboxed: sandboxed ?? session.sandboxed ?? false,
      config,
      gateway,
    }),
    waitTool,
    echoTool,
  ];
  const harness = await startHarness({
    script,
    config: input,
    workspaceDir,
    subagents: { retryBaseMs: 20, retryMaxMs: 200, pollMs: 25 },
    tools: ({ session, gateway }) => toolsOf(session, gateway),
    ...rest,
  });
  return {
    ...harness,
    config,
    workspaceDir,
    async tools(requesterKey, toolOptions = {}) {
      const agentId = /^agent:([^:]+):/.exec(requesterKey)?.[1] ?? 'main';
      const session =
        (await harness.store.getSession(requesterKey)) ?? makeSessionRecord(requesterKey, { agentId });
      const list = toolsOf(session, harness.runtime.gateway, toolOptions.sandboxed);
      return Object.fromEntries(list.map((tool) => [tool.name, tool]));
    },
    async close() {
      await harness.close();
      rmSync(workspaceDir, { recursive: true, force: true });
    },
  };
}

/** Puts a main session with a chat (the memory channel's `user-1`) into the store. */
export async function seedMain(store: Store, overrides: Partial<SessionRecord> = {}): Promise<SessionRecord> {
  const record = makeSessionRecord(MAIN, {
    kind: 'main',
    agentId: 'main',
    spawnDepth: 0,
    status: 'idle',
    chatType: 'direct',
    deliveryContext: { ...MAIN_CHAT },
    lastChannel: 'memory',
    ...overrides,
  });
  await store.putSession(record);
  return record;
}

/** Runs a tool and returns its JSON details (parsed from the text the model would read). */
export async function call<T = Record<string, unknown>>(
  tool: AgentTool | undefined,
  args: unknown,
): Promise<T> {
  if (!tool) throw new Error('no such tool');
  const result = await tool.execute('call-test', args as never);
  return JSON.parse(result.content[0].text) as T;
}

/** True when the request is a sub-agent's (its system prompt says so). */
export function isSubagent(request: ModelRequest): boolean {
  return request.system.includes('You are a sub-agent');
}

/** The user-role texts of a request, in order. */
export function userTexts(request: ModelRequest): string[] {
  return request.messages.filter((m) => m.role === 'user').map((m) => messageText(m));
}

/** Every outbox row, whatever its status. */
export function allOutbox(store: Store): Promise<OutboxEntry[]> {
  return store.listOutbox({ statuses: ['pending', 'delivered', 'skipped', 'parked'] });
}

/** Every announce message a session's transcript holds, by the child run it reports. */
export async function announcesIn(
  store: Store,
  sessionKey: string,
): Promise<{ runId: string; text: string }[]> {
  return (await store.readTail(sessionKey, 10_000))
    .filter((m) => m.provenance?.kind === 'announce')
    .map((m) => ({
      runId: m.provenance?.sourceRunId ?? '',
      text: typeof m.content === 'string' ? m.content : '',
    }));
}

/**
 * Waits until the session can produce nothing more on its own: a forced drain has delivered every
 * pending announce (and enqueued the wakes it causes), and every run of the session has ended with its
 * chat message sent or its cut send recorded. A check for "nothing twice" after this rests on that
 * event, not on a sleep.
 */
export async function quiesce(h: Harness, sessionKey = MAIN): Promise<void> {
  await h.runtime.subagents.drain({ force: true });
  await waitFor(
    async () =>
      (await h.store.listInbox(sessionKey)).length === 0 &&
      (await allOutbox(h.store)).every((row) => row.status !== 'pending') &&
      (await h.store.listRuns({ sessionKey })).every((run) => {
        if (run.status === 'queued' || run.status === 'running') return false;
        const delivery = run.meta?.delivery as { status?: string } | undefined;
        return (
          run.meta?.pendingDelivery === undefined || (delivery !== undefined && delivery.status !== 'sending')
        );
      }),
    4000,
    `${sessionKey} to settle`,
  );
}
