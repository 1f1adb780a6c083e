import { expect } from 'vitest';
import { STORE_KINDS } from '../../support/harness.js';
import { checkAnswer } from './expectations.js';
import { closeRig, openRig, type Rig, runCall, searchMatches, settle, storedSessions } from './rig.js';
import { type ResolvedCall, resolveStep, type Step } from './steps.js';
import { World } from './world.js';

/**
 * Runs one sequence of steps on a fresh runtime per store, step by step: the same call on every
 * store, a wait until each store's runs settle, then the answers compared across stores (in
 * placeholder form), checked against the model, and the model's world compared with each store's
 * sessions. A failure names the step and lists the calls that led to it.
 */
export async function runSequence(steps: readonly Step[], tally?: Tally): Promise<void> {
  const rigs = await Promise.all(STORE_KINDS.map(openRig));
  const world = new World();
  const done: string[] = [];
  try {
    for (const step of steps) {
      const call = resolveStep(step, world);
      if (!call) continue;
      done.push(describeCall(done.length + 1, call));
      try {
        const answer = await runStep(rigs, call, world);
        tally?.count(call, answer);
      } catch (error) {
        throw withCalls(error, done);
      }
    }
  } finally {
    await Promise.all(rigs.map(closeRig));
  }
}

async function runStep(
  rigs: readonly Rig[],
  call: ResolvedCall,
  world: World,
): Promise<Record<string, unknown>> {
  const answers = await Promise.all(rigs.map((rig) => runCall(rig, call)));
  await Promise.all(rigs.map((rig) => settle(rig)));
  const query = call.type === 'tool' && call.tool === 'sessions_search' ? String(call.args.query) : undefined;
  const matches = query ? await Promise.all(rigs.map((rig) => searchMatches(rig, query))) : undefined;
  for (const [i, rig] of rigs.entries()) {
    if (i > 0) {
      expectSame(
        rig.kind,
        rigs[0]!.kind,
        'answers',
        comparable(call, answers[i]),
        comparable(call, answers[0]),
      );
      if (matches) expectSame(rig.kind, rigs[0]!.kind, 'search matches', matches[i], matches[0]);
    }
    checkAnswer(call, answers[i] as Record<string, unknown>, world, matches?.[i] ?? [], rig.kind);
  }
  const answer = answers[0] as Record<string, unknown>;
  updateWorld(call, answer, world, rigs[0]!);
  const expected = world
    .existing()
    .map(({ exists: _exists, ...session }) => session)
    .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  for (const rig of rigs) {
    expect(await storedSessions(rig), `the sessions on ${rig.kind} are the model's`).toEqual(expected);
  }
  return answer;
}

/**
 * How often each kind of outcome occurred over a property's runs (`sessions_list:ok`,
 * `sessions_send:forbidden`, `sessions_search:hits`, `sessions_spawn:fork`, ...), so a suite can
 * check its random steps reached the cases it is about.
 */
export class Tally {
  readonly counts = new Map<string, number>();

  count(call: ResolvedCall, answer: Record<string, unknown>): void {
    const name = call.type === 'gateway' ? call.method : call.tool;
    const outcome =
      call.type === 'gateway'
        ? String(answer.deleted === true ? 'deleted' : 'missing')
        : typeof answer.error === 'string'
          ? String(answer.status)
          : 'ok';
    this.add(`${name}:${outcome}`);
    if (Array.isArray(answer.hits) && answer.hits.length > 0) this.add(`${name}:hits`);
    if (answer.filtered !== undefined) this.add(`${name}:hidden`);
    if (answer.inherited !== undefined) this.add(`${name}:fork`);
  }

  private add(name: string): void {
    this.counts.set(name, (this.counts.get(name) ?? 0) + 1);
  }
}

/** What a call changed in the world: a spawned child (gone again with `cleanup: "delete"`), a deletion. */
function updateWorld(call: ResolvedCall, answer: Record<string, unknown>, world: World, rig: Rig): void {
  if (call.type === 'gateway') {
    if (answer.deleted === true && call.target.key !== undefined) world.remove(call.target.key);
    return;
  }
  if (call.tool !== 'sessions_spawn' || answer.status !== 'accepted') return;
  const requester = world.get(call.requester)!;
  const key = String(answer.childSessionKey);
  const inherited = answer.inherited as { messages: number } | undefined;
  world.add({
    key,
    agentId: /^agent:([^:]+):/.exec(key)![1]!,
    kind: 'subagent',
    ...(typeof call.args.label === 'string' ? { label: call.args.label } : {}),
    spawnedBy: requester.key,
    forked: (inherited?.messages ?? 0) > 0,
    spawnDepth: requester.spawnDepth + 1,
    sessionId: rig.childSessionIds.get(key)!,
    exists: true,
  });
  if (call.args.cleanup === 'delete') world.remove(key);
}

/**
 * What of an answer must be the same on every store. All of it, except a search's hits: each
 * store ranks with its own engine (FTS5's bm25, PostgreSQL's ts_rank, the MemoryStore's score),
 * so a page holding every hit is compared as a set, and a partial page (whose hits, and so whose
 * count and redacted flag, depend on the ranking) by where the next page starts. The model checks
 * every store's hits on their own.
 */
function comparable(call: ResolvedCall, answer: unknown): unknown {
  if (call.type !== 'tool' || call.tool !== 'sessions_search') return answer;
  const { hits, ...rest } = answer as { hits?: { sessionKey: string; messageIndex: number }[] };
  if (hits === undefined) return answer;
  const complete = ((call.args.offset as number | undefined) ?? 0) === 0 && !('nextOffset' in rest);
  if (!complete) return { nextOffset: (rest as { nextOffset?: number }).nextOffset };
  const order = (h: { sessionKey: string; messageIndex: number }) => `${h.sessionKey}#${h.messageIndex}`;
  return {
    ...rest,
    hits: [...hits].sort((a, b) => (order(a) < order(b) ? -1 : order(a) > order(b) ? 1 : 0)),
  };
}

/** Two stores' answers to the same call must be the same data once placeholders replaced what differs. */
function expectSame(kind: string, reference: string, what: string, actual: unknown, expected: unknown): void {
  if (JSON.stringify(actual) === JSON.stringify(expected)) return;
  expect(actual, `${what} on ${kind} differ from those on ${reference}`).toEqual(expected);
}

/** One line per call: its number, who called under which settings, the tool and its arguments. */
export function describeCall(n: number, call: ResolvedCall): string {
  if (call.type === 'gateway') return `#${n} gateway ${call.method} ${JSON.stringify(call.params)}`;
  const s = call.settings;
  const a2a = s.agentToAgent.enabled ? `a2a [${s.agentToAgent.allow.join(',')}]` : 'a2a off';
  const sandbox = s.sandboxed ? `, sandboxed (clamp ${s.sandboxClamp})` : '';
  return `#${n} ${call.requester} [${s.visibility}${sandbox}, ${a2a}] ${call.tool} ${JSON.stringify(call.args)}`;
}

function withCalls(error: unknown, calls: readonly string[]): unknown {
  if (error instanceof Error) {
    error.message = `${error.message}\n\nthe calls, in placeholder form (the last one failed):\n${calls.join('\n')}`;
  }
  return error;
}
