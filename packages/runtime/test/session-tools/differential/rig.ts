import {
  type ColloquyConfig,
  type ColloquyConfigInput,
  createSessionTools,
  isColloquyError,
  resolveConfig,
} from '@colloquy/core';
import { lastUserText, makeSessionRecord, type ScriptFn } from '@colloquy/testkit';
import { type Harness, type StoreKind, startHarness } from '../../support/harness.js';
import type { AccessSettings } from '../expected-visibility.js';
import { hasStoreSpecificParts, Placeholders } from './placeholders.js';
import type { ResolvedCall } from './steps.js';
import {
  AGENTS,
  DEFAULT_AGENT,
  MAX_SPAWN_DEPTH,
  SANDBOXED_AGENTS,
  SEED_SESSIONS,
  SPAWNS_AS,
  seedSessionId,
  seedTexts,
  WORDS,
} from './world.js';

/**
 * One store's side of the differential suite: a runtime on that store with a deterministic
 * scripted model, the seeded world, the calls of the steps, and the wait until its runs settle.
 */

/** The chat of the seeded session that has one. */
const CHAT = { channel: 'memory', to: 'user-1', accountId: 'default' } as const;

/**
 * The config of the suite, with the settings of one call (visibility, sandbox clamp,
 * agent-to-agent) when given: the agents of `world.ts` and what they may spawn; nothing is
 * archived while the suite runs.
 */
export function suiteConfig(settings?: AccessSettings): ColloquyConfigInput {
  return {
    tools: settings
      ? {
          sessions: { visibility: settings.visibility },
          agentToAgent: { enabled: settings.agentToAgent.enabled, allow: [...settings.agentToAgent.allow] },
        }
      : {},
    session: { agentToAgent: { maxPingPongTurns: 1 } },
    agents: {
      defaults: {
        model: 'scripted/test',
        subagents: { maxSpawnDepth: MAX_SPAWN_DEPTH, archiveAfterMinutes: 0 },
        sandbox: { sessionToolsVisibility: settings?.sandboxClamp ?? 'spawned' },
      },
      list: AGENTS.map((id) => ({
        id,
        ...(id === DEFAULT_AGENT ? { default: true } : {}),
        ...(SANDBOXED_AGENTS.includes(id) ? { sandboxed: true } : {}),
        subagents: { allowAgents: [...SPAWNS_AS[id]!] },
      })),
    },
  };
}

/**
 * The model of every store: it answers from the words of the last user message only, so its
 * replies never carry ids, and reports as many input tokens as the prompt has messages.
 */
export const differentialScript: ScriptFn = (request) => {
  const last = lastUserText(request) ?? '';
  const usage = { inputTokens: request.messages.length, outputTokens: 1 };
  if (last.includes('Write a short announcement')) return { text: 'ANNOUNCE_SKIP', usage };
  if (request.system.includes('reply-back exchange')) return { text: 'REPLY_SKIP', usage };
  if (/^Sub-agent \S+.* finished\./.test(last)) return { text: 'noted', usage };
  const words = (last.match(/[a-z]+/g) ?? []).filter((w) => (WORDS as readonly string[]).includes(w));
  const head = request.system.includes('You are a sub-agent') ? 'done' : 'echo';
  return { text: `${head} ${words.join(' ') || 'nothing'}`, usage };
};

/** A strictly increasing clock near real time: no two events share a timestamp, so no order ties. */
function strictClock(): { now(): number } {
  let last = 0;
  return {
    now() {
      last = Math.max(last + 1, Date.now());
      return last;
    },
  };
}

/** One store's runtime, its clock, its id placeholders and the background work of its tools. */
export interface Rig {
  kind: StoreKind;
  harness: Harness;
  clock: { now(): number };
  ids: Placeholders;
  /** Agent-to-agent flows the tools started, awaited before the runs count as settled. */
  flows: Set<Promise<void>>;
  /** The sessionId of each spawned child, by child key (placeholder form, both). */
  childSessionIds: Map<string, string>;
}

/** Boots a runtime on a fresh store of `kind` and seeds the world. */
export async function openRig(kind: StoreKind): Promise<Rig> {
  const clock = strictClock();
  const harness = await startHarness({
    storeKind: kind,
    script: differentialScript,
    config: suiteConfig(),
    clock,
    subagents: { retryBaseMs: 20, retryMaxMs: 200, pollMs: 25 },
  });
  const rig: Rig = {
    kind,
    harness,
    clock,
    ids: new Placeholders(),
    flows: new Set(),
    childSessionIds: new Map(),
  };
  await seed(rig);
  return rig;
}

async function seed(rig: Rig): Promise<void> {
  const { store } = rig.harness;
  for (const [index, session] of SEED_SESSIONS.entries()) {
    const at = rig.clock.now();
    await store.putSession(
      makeSessionRecord(session.key, {
        sessionId: seedSessionId(index),
        kind: session.kind,
        createdAt: at,
        updatedAt: at,
        spawnDepth: session.spawnedBy ? 1 : 0,
        ...(session.label ? { label: session.label } : {}),
        ...(session.spawnedBy ? { spawnedBy: session.spawnedBy } : {}),
        ...(session.forked ? { forked: true } : {}),
        ...(session.chat ? { chatType: 'direct', deliveryContext: { ...CHAT }, lastChannel: 'memory' } : {}),
      }),
    );
    await store.appendMessages(
      session.key,
      seedTexts(index).map((content, m) => ({
        role: m % 2 === 0 ? ('user' as const) : ('assistant' as const),
        content,
        timestamp: rig.clock.now(),
      })),
    );
  }
}

const configs = new Map<string, ColloquyConfig>();

function configFor(settings: AccessSettings): ColloquyConfig {
  const key = JSON.stringify(settings);
  let config = configs.get(key);
  if (!config) {
    config = resolveConfig(suiteConfig(settings));
    configs.set(key, config);
  }
  return config;
}

/**
 * Runs a call on this store and returns its answer in placeholder form: a tool's JSON, or a
 * gateway method's result (a rejection becomes `{ rejected: code }`). A spawned child's
 * sessionId is numbered right after its key, so every store numbers it alike.
 */
export async function runCall(rig: Rig, call: ResolvedCall): Promise<unknown> {
  const { runtime, store } = rig.harness;
  if (call.type === 'gateway') {
    const params = rig.ids.denormaliseDeep(call.params);
    const answer = await runtime.gateway
      .call(call.method, params)
      .catch((error: unknown) => ({ rejected: isColloquyError(error) ? error.code : String(error) }));
    return rig.ids.normalise(answer);
  }
  const tool = createSessionTools({
    requesterKey: rig.ids.denormalise(call.requester),
    agentId: call.agentId,
    sandboxed: call.settings.sandboxed,
    config: configFor(call.settings),
    gateway: runtime.gateway,
    now: rig.clock.now,
    track: (work) => {
      rig.flows.add(work);
      void work.finally(() => rig.flows.delete(work));
    },
  }).find((t) => t.name === call.tool);
  if (!tool) throw new Error(`no tool ${call.tool}`);
  const result = await tool.execute('differential', rig.ids.denormaliseDeep(call.args) as never);
  const answer = JSON.parse(result.content[0].text) as Record<string, unknown>;
  checkTotalBytes(rig, answer);
  if (call.tool === 'sessions_search') await checkSnippets(rig, call, answer);
  const normalised = rig.ids.normalise(answer, {
    numberTimes: call.tool !== 'sessions_search',
  }) as Record<string, unknown>;
  // Its size follows the store's own locators and the durations in the text: checked above.
  if ('totalBytes' in normalised) normalised.totalBytes = '<checked>';
  if (call.tool === 'sessions_spawn' && answer.status === 'accepted') {
    const child = await store.getSession(String(answer.childSessionKey));
    if (child) rig.childSessionIds.set(String(normalised.childSessionKey), rig.ids.id(child.sessionId));
  }
  return normalised;
}

/**
 * `totalBytes` of a history page is the size of its messages' JSON: checked here, on the real
 * answer, since locators and durations make it differ between stores.
 */
function checkTotalBytes(rig: Rig, answer: Record<string, unknown>): void {
  if (typeof answer.totalBytes !== 'number') return;
  const bytes = Buffer.byteLength(JSON.stringify(answer.messages));
  if (bytes !== answer.totalBytes) {
    throw new Error(`${rig.kind}: totalBytes ${answer.totalBytes} but the messages' JSON has ${bytes} bytes`);
  }
}

/**
 * Each hit's snippet must be an excerpt of its message holding a word of the query. Checked here,
 * on the real answer: a message with parts whose length differs between stores (an announce's
 * locator and duration) is cut at places that differ too, so its snippet is then replaced by a
 * mark before the stores are compared.
 */
async function checkSnippets(
  rig: Rig,
  call: ResolvedCall & { type: 'tool' },
  answer: Record<string, unknown>,
) {
  const hits = answer.hits as { sessionKey: string; messageIndex: number; snippet: string }[] | undefined;
  const terms = String(call.args.query).split(' ');
  for (const hit of hits ?? []) {
    const key = hit.sessionKey === 'main' ? `agent:${call.agentId}:main` : hit.sessionKey;
    const seq = hit.messageIndex + 1;
    const [message] = await rig.harness.store.readTail(key, 1, { beforeSeq: seq + 1 });
    const text = typeof message?.content === 'string' ? message.content : JSON.stringify(message?.content);
    const excerpt = hit.snippet.replace(/^…/, '').replace(/…$/, '');
    if (message?.seq !== seq || !text.replace(/\s+/g, ' ').includes(excerpt)) {
      throw new Error(
        `${rig.kind}: the snippet "${hit.snippet}" is not an excerpt of ${key} #${seq}: "${text}"`,
      );
    }
    if (!terms.some((term) => new RegExp(`\\b${term}\\b`, 'i').test(excerpt))) {
      throw new Error(`${rig.kind}: the snippet "${hit.snippet}" holds no word of "${call.args.query}"`);
    }
    if (hasStoreSpecificParts(text)) hit.snippet = '<an excerpt, checked>';
  }
}

/**
 * Waits until nothing more happens on its own: the tools' agent-to-agent flows ended, every
 * announce was delivered (and the wake turns it caused ran, but for inboxes of sessions that do
 * not exist), no run is queued or running and no reply is being sent. Then a sweep removes the `cleanup: "delete"` children whose announce is done.
 */
export async function settle(rig: Rig, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let quiet = 0;
  while (quiet < 2) {
    if (Date.now() > deadline) throw new Error(`${rig.kind}: the runs did not settle within ${timeoutMs} ms`);
    await Promise.all([...rig.flows]);
    await rig.harness.runtime.subagents.drain({ force: true });
    quiet = (await isQuiet(rig)) ? quiet + 1 : 0;
    await new Promise((resolve) => setTimeout(resolve, 3));
  }
  await rig.harness.runtime.subagents.sweep();
}

async function isQuiet(rig: Rig): Promise<boolean> {
  const { runtime, store } = rig.harness;
  const stats = runtime.stats();
  if (stats.pending > 0 || Object.values(stats.lanes).some((lane) => lane.running > 0)) return false;
  if (rig.flows.size > 0) return false;
  const [active, outbox, inbox, recent] = await Promise.all([
    store.listRuns({ statuses: ['queued', 'running'], limit: 1 }),
    store.listOutbox({ limit: 1 }),
    store.listInboxSessionKeys(),
    store.listRuns({ limit: 10 }),
  ]);
  if (active.length > 0 || outbox.length > 0) return false;
  // An announce parked for a main session that was deleted waits there until it exists again.
  const waking = await Promise.all(inbox.map((key) => store.getSession(key)));
  if (waking.some((session) => session !== undefined)) return false;
  return recent.every((run) => {
    const delivery = run.meta?.delivery as { status?: string } | undefined;
    return (
      run.meta?.pendingDelivery === undefined || (delivery !== undefined && delivery.status !== 'sending')
    );
  });
}

/** Shuts the runtime down and removes its files. */
export async function closeRig(rig: Rig): Promise<void> {
  await rig.harness.close();
}

/** A session as stored, in placeholder form: what the model's world must agree with. */
export interface StoredSession {
  key: string;
  agentId: string;
  kind: string;
  label?: string;
  spawnedBy?: string;
  forked: boolean;
  spawnDepth: number;
  sessionId: string;
}

/** Every session the store holds, archived ones included, by key. */
export async function storedSessions(rig: Rig): Promise<StoredSession[]> {
  const sessions = await rig.harness.store.listSessions({ includeArchived: true });
  return sessions
    .map(
      (s) =>
        rig.ids.normalise({
          key: s.key,
          agentId: s.agentId,
          kind: s.kind,
          ...(s.label !== undefined ? { label: s.label } : {}),
          ...(s.spawnedBy !== undefined ? { spawnedBy: s.spawnedBy } : {}),
          forked: s.forked === true,
          spawnDepth: s.spawnDepth ?? 0,
          sessionId: s.sessionId,
        }) as StoredSession,
    )
    .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}

/** Every message the store's search finds for `query` (the ground truth of a search), by key and seq. */
export async function searchMatches(rig: Rig, query: string): Promise<{ key: string; seq: number }[]> {
  const { hits } = await rig.harness.store.searchMessages({ text: query, limit: 100_000 });
  return hits
    .map((hit) => ({ key: rig.ids.normalise(hit.sessionKey) as string, seq: hit.message.seq }))
    .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : a.seq - b.seq));
}
