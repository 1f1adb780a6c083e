import { expect } from 'vitest';
import {
  type AccessSettings,
  agentOfKey,
  agentToAgentAdmits,
  expectedAccess,
  expectedCountable,
} from '../expected-visibility.js';
import type { ResolvedCall, ResolvedTarget } from './steps.js';
import {
  AGENTS,
  DEFAULT_AGENT,
  MAX_SPAWN_DEPTH,
  SANDBOXED_AGENTS,
  SPAWNS_AS,
  type World,
  type WorldSession,
} from './world.js';

/**
 * The model's side of the differential suite: what each answer must be according to spec
 * sections 9 and 11 and the world, checked key by key. Answers and world are both in placeholder
 * form; every store's answer is checked.
 */

/** One message a store's search matched, by session and position (the ground truth of a search). */
export interface Match {
  key: string;
  seq: number;
}

interface Row {
  key: string;
  kind: string;
  sessionId: string;
  label?: string;
  childSessions?: string[];
}

interface Hit {
  sessionKey: string;
  messageIndex: number;
}

type Answer = Record<string, unknown>;

/** Checks one store's answer against the model; `matches` is that store's ground truth for a search. */
export function checkAnswer(
  call: ResolvedCall,
  answer: Answer,
  world: World,
  matches: readonly Match[],
  store: string,
): void {
  try {
    checkAgainstModel(call, answer, world, matches);
  } catch (error) {
    if (error instanceof Error) error.message = `on ${store}: ${error.message}`;
    throw error;
  }
}

function checkAgainstModel(
  call: ResolvedCall,
  answer: Answer,
  world: World,
  matches: readonly Match[],
): void {
  if (call.type === 'gateway') {
    expect(answer, 'sessions.delete deletes exactly the sessions that exist').toEqual({
      deleted: call.target.key !== undefined,
    });
    return;
  }
  const model = new CallModel(call.settings, call.requester, world);
  switch (call.tool) {
    case 'sessions_list':
      checkList(model, call.args, answer);
      break;
    case 'sessions_history':
      checkTargeted(model, call.target!, 'history', answer);
      break;
    case 'session_status':
      checkStatus(model, call.target!, answer);
      break;
    case 'sessions_search':
      checkSearch(model, call.args, call.target, answer, matches);
      break;
    case 'sessions_send':
      checkSend(model, call.target!, answer);
      break;
    case 'sessions_spawn':
      checkSpawn(model, call.args, answer);
      break;
  }
}

/** The visibility model bound to one call: its settings, its requester and the world. */
class CallModel {
  readonly requesterAgent: string;
  constructor(
    readonly settings: AccessSettings,
    readonly requester: string,
    readonly world: World,
  ) {
    this.requesterAgent = agentOfKey(requester, DEFAULT_AGENT);
  }

  may(key: string, access: 'list' | 'history' | 'status' | 'send'): boolean {
    return expectedAccess(this.settings, this.requester, key, access, this.world.lookup);
  }

  countable(key: string): boolean {
    return expectedCountable(this.settings, this.requester, key);
  }

  /** The internal key of a key as the tools show it (`main` is the requester's agent's main session). */
  internal(shown: string): string {
    return shown === 'main' ? `agent:${this.requesterAgent}:main` : shown;
  }

  /** How the tools show a key to this requester. */
  display(key: string): string {
    return key === `agent:${this.requesterAgent}:main` ? 'main' : key;
  }

  /** The existing session a shown key names, which the requester must be allowed to see. */
  visibleSession(shown: string, access: 'list' | 'history', what: string): WorldSession {
    const key = this.internal(shown);
    const session = this.world.get(key);
    expect(session, `${what} ${shown} exists`).toBeDefined();
    expect(this.may(key, access), `${what} ${shown} is visible to ${this.requester}`).toBe(true);
    return session!;
  }
}

const sorted = (items: Iterable<string>) => [...items].sort();

function kindFilter(args: Answer): (session: WorldSession) => boolean {
  const kinds = args.kinds as string[] | undefined;
  return (session) => kinds === undefined || kinds.includes(session.kind);
}

function checkList(model: CallModel, args: Answer, answer: Answer): void {
  expect(answer.error, 'sessions_list answers').toBeUndefined();
  const rows = answer.sessions as Row[];
  const inFilter = kindFilter(args);
  for (const row of rows) {
    const session = model.visibleSession(row.key, 'list', 'listed');
    expect(inFilter(session), `listed ${row.key} is of a kind asked for`).toBe(true);
    expect({ kind: row.kind, sessionId: row.sessionId, label: row.label }).toEqual({
      kind: session.kind,
      sessionId: session.sessionId,
      label: session.label,
    });
    const children = model.world
      .existing()
      .filter((child) => child.spawnedBy === session.key && model.may(child.key, 'list'))
      .map((child) => model.display(child.key));
    expect(sorted(row.childSessions ?? []), `the children ${row.key} shows`).toEqual(sorted(children));
  }
  const existing = model.world.existing().filter(inFilter);
  const visible = existing.filter((s) => model.may(s.key, 'list'));
  if ((args.offset ?? 0) === 0 && ((args.limit as number | undefined) ?? 200) >= existing.length) {
    expect(sorted(rows.map((r) => model.internal(r.key))), 'every visible session is listed').toEqual(
      sorted(visible.map((s) => s.key)),
    );
  }
  const hidden = existing.filter((s) => model.countable(s.key) && !model.may(s.key, 'list'));
  expectHidden(answer, hidden.length, 'sessions');
}

/** `filtered.hidden` must count exactly the countable sessions (or messages) the caller cannot see. */
function expectHidden(answer: Answer, hidden: number, what: string): void {
  expect(hiddenOf(answer), `filtered.hidden counts the countable ${what} hidden`).toBe(hidden);
}

function hiddenOf(answer: Answer): number {
  const filtered = answer.filtered as { hidden: number } | undefined;
  if (filtered)
    expect(filtered.hidden, 'filtered is present only when something was hidden').toBeGreaterThan(0);
  return filtered?.hidden ?? 0;
}

/**
 * A call on one named session: refused like a missing one when hidden or missing, refused when
 * reserved, and answered for that very session when visible. A refusal names no session.
 */
function checkTargeted(
  model: CallModel,
  target: ResolvedTarget,
  access: 'history' | 'status',
  answer: Answer,
): WorldSession | undefined {
  if (target.reserved) {
    expect(answer.status, 'a reserved key is refused').toMatch(/^(error|forbidden)$/);
    return undefined;
  }
  if (target.key === undefined || !model.may(target.key, access)) {
    expect(answer.status, `${access} of a ${target.key ? 'hidden' : 'missing'} session`).toBe('forbidden');
    expectNamesNoSession(model, answer);
    return undefined;
  }
  expect(answer.error, `${access} of visible ${target.key}`).toBeUndefined();
  if ('sessionKey' in answer || 'messages' in answer) {
    expect(answer.sessionKey, `${access} names the session it read`).toBe(model.display(target.key));
  }
  if (Array.isArray(answer.messages)) checkProvenance(model, answer);
  return model.world.get(target.key);
}

/** The sessions named in a history page's provenance must exist and be visible too. */
function checkProvenance(model: CallModel, answer: Answer): void {
  for (const message of answer.messages as { provenance?: { sourceSessionKey?: string } }[]) {
    const source = message.provenance?.sourceSessionKey;
    if (source === undefined) continue;
    expect(
      model.world.get(source),
      `history names ${source}, which exists, as a message's source`,
    ).toBeDefined();
    expect(model.may(source, 'list'), `history names ${source} as a message's source`).toBe(true);
  }
}

/** A refusal's text names no session key, sessionId or label of the world. */
function expectNamesNoSession(model: CallModel, answer: Answer): void {
  const text = JSON.stringify(answer);
  for (const session of model.world.all()) {
    if (session.key === 'global') continue;
    expect(text, 'a refusal names no session').not.toContain(session.key);
    expect(text, 'a refusal names no sessionId').not.toContain(session.sessionId);
  }
}

function checkStatus(model: CallModel, target: ResolvedTarget, answer: Answer): void {
  const session = checkTargeted(model, target, 'status', answer);
  if (!session) return;
  expect({ agentId: answer.agentId, sessionId: answer.sessionId }).toEqual({
    agentId: session.agentId,
    sessionId: session.sessionId,
  });
}

function checkSearch(
  model: CallModel,
  args: Answer,
  target: ResolvedTarget | undefined,
  answer: Answer,
  matches: readonly Match[],
): void {
  const limit = (args.limit as number | undefined) ?? 10;
  const offset = (args.offset as number | undefined) ?? 0;
  const inFilter = kindFilter(args);
  if (target) {
    const session = checkTargeted(model, target, 'history', answer);
    if (!session) return;
    const own = matches.filter((m) => m.key === session.key && inFilter(session));
    checkHits(model, answer, own, limit, offset, own.length);
    expect(answer.filtered, 'a search of one visible session hides nothing').toBeUndefined();
    return;
  }
  expect(answer.error, 'sessions_search answers').toBeUndefined();
  const scoped = matches.filter((m) => {
    const session = model.world.get(m.key);
    return session !== undefined && inFilter(session);
  });
  const visible = scoped.filter((m) => model.may(m.key, 'history'));
  checkHits(model, answer, visible, limit, offset, scoped.length);
  const hidden = scoped.filter((m) => model.countable(m.key) && !model.may(m.key, 'history'));
  expectHidden(answer, hidden.length, 'messages');
}

/** Every hit is a visible match; with one page holding every match in scope, every visible one is a hit. */
function checkHits(
  model: CallModel,
  answer: Answer,
  visible: readonly Match[],
  limit: number,
  offset: number,
  inScope: number,
): void {
  const hits = answer.hits as Hit[];
  const id = (key: string, seq: number) => `${key}#${seq}`;
  const allowed = new Set(visible.map((m) => id(m.key, m.seq)));
  for (const hit of hits) {
    const session = model.visibleSession(hit.sessionKey, 'history', 'a hit in');
    expect(
      allowed.has(id(session.key, hit.messageIndex + 1)),
      `hit ${hit.sessionKey}#${hit.messageIndex}`,
    ).toBe(true);
  }
  if (offset === 0 && limit >= inScope) {
    expect(
      sorted(hits.map((h) => id(model.internal(h.sessionKey), h.messageIndex + 1))),
      'every visible match is a hit',
    ).toEqual(sorted(allowed));
  }
}

function checkSend(model: CallModel, target: ResolvedTarget, answer: Answer): void {
  if (target.labelled !== undefined) {
    const reachable = target.labelled.filter((key) => model.may(key, 'send'));
    if (reachable.length > 1) {
      expect(answer.status, 'a label several visible sessions carry is ambiguous').toBe('error');
      return;
    }
    checkSendTo(model, reachable[0], answer);
    return;
  }
  if (target.reserved) {
    expect(answer.status, 'sending to a reserved key is refused').toMatch(/^(error|forbidden)$/);
    return;
  }
  checkSendTo(
    model,
    target.key !== undefined && model.may(target.key, 'send') ? target.key : undefined,
    answer,
  );
}

function checkSendTo(model: CallModel, key: string | undefined, answer: Answer): void {
  if (key === undefined) {
    expect(answer.status, 'sending to a hidden, missing or own session').toBe('forbidden');
    if (!String(answer.error).includes('cannot send to itself')) expectNamesNoSession(model, answer);
    return;
  }
  expect(answer.status, `sending to visible ${key}`).toBe('accepted');
  expect(answer.sessionKey, 'the send names its target').toBe(model.display(key));
}

/**
 * Spawning (spec sections 5 and 11): refused at the depth limit, for an agent not allowed, for a
 * sandboxed caller and an unsandboxed child, and for a fork into another agent unless
 * agent-to-agent admits both; otherwise accepted with a child of the asked agent.
 */
function checkSpawn(model: CallModel, args: Answer, answer: Answer): void {
  const requester = model.world.get(model.requester)!;
  const childAgent = (args.agentId as string | undefined) ?? requester.agentId;
  expect(AGENTS as readonly string[]).toContain(childAgent);
  const refused =
    requester.spawnDepth >= MAX_SPAWN_DEPTH ||
    (childAgent !== requester.agentId && !SPAWNS_AS[requester.agentId]!.includes(childAgent)) ||
    (model.settings.sandboxed && !SANDBOXED_AGENTS.includes(childAgent)) ||
    (args.context === 'fork' &&
      childAgent !== requester.agentId &&
      !agentToAgentAdmits(model.settings, requester.agentId, childAgent));
  if (refused) {
    expect(answer.status, 'a refused spawn').toBe('forbidden');
    return;
  }
  expect(answer.status, 'an allowed spawn').toBe('accepted');
  expect(String(answer.childSessionKey)).toMatch(new RegExp(`^agent:${childAgent}:subagent:<id:\\d+>$`));
}
