import fc from 'fast-check';
import type { AccessSettings, Visibility } from '../expected-visibility.js';
import { ABSENT_WORD, AGENTS, DEFAULT_AGENT, MISSING_KEYS, WORDS, type World } from './world.js';

/**
 * The random steps of the differential suite, as plain data that fast-check generates and shrinks,
 * and their resolution against the model's world into concrete calls. A step names its requester
 * and targets by position (taken modulo what exists when it runs), so any sub-sequence of a
 * failing sequence is still a valid sequence and shrinking keeps working.
 */

/** Who calls, under which settings. */
export interface CallerChoice {
  /** Index into the sessions that may call (taken modulo their number). */
  requester: number;
  visibility: Visibility;
  sandboxed: boolean;
  sandboxClamp: 'spawned' | 'all';
  agentToAgent: { enabled: boolean; allow: string[] };
}

/** A session a step names: one the world made (perhaps deleted since), one never made, or an alias. */
export type TargetChoice =
  | { type: 'known'; index: number; spelling: 'key' | 'loud' | 'sessionId' }
  | { type: 'missing'; index: number; spelling: 'key' | 'sessionId' }
  | { type: 'alias' }
  | { type: 'reserved' };

/** A target of `sessions_send`, which may also name a session by its label. */
export type SendTargetChoice = TargetChoice | { type: 'label'; label: string; agentId?: string };

/** One step of a sequence. */
export type Step =
  | {
      tool: 'sessions_list';
      caller: CallerChoice;
      kinds?: string[];
      limit?: number;
      offset?: number;
      messageLimit?: number;
    }
  | {
      tool: 'sessions_history';
      caller: CallerChoice;
      target: TargetChoice;
      limit?: number;
      includeTools?: boolean;
    }
  | { tool: 'session_status'; caller: CallerChoice; target?: TargetChoice }
  | {
      tool: 'sessions_search';
      caller: CallerChoice;
      words: string[];
      target?: TargetChoice;
      kinds?: string[];
      limit?: number;
      offset?: number;
    }
  | { tool: 'sessions_send'; caller: CallerChoice; target: SendTargetChoice; words: string[] }
  | {
      tool: 'sessions_spawn';
      caller: CallerChoice;
      words: string[];
      agentId?: string;
      context?: 'isolated' | 'fork';
      label?: string;
      cleanup?: 'keep' | 'delete';
    }
  | { tool: 'sessions.delete'; target: TargetChoice };

/** Labels a send may name: the seeded ones, one that spawns may give, and one nobody has. */
export const SEND_LABELS = ['alice', 'team', 'bob', 'vault', 'helper', 'scout', 'ghost'] as const;
/** Labels a spawn may give its child (`team` is taken by a seeded session of `main` and of `ops`). */
export const SPAWN_LABELS = ['scout', 'team'] as const;
const KINDS = ['main', 'dm', 'group', 'subagent', 'cron', 'other'] as const;

/**
 * Mostly absent (with the record's own half, seven times out of eight): for paging arguments, so
 * most pages cover everything and the model can check that nothing visible is missing.
 */
const rarely = <T>(arb: fc.Arbitrary<T>) =>
  fc.oneof({ weight: 3, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: arb });
/** The words of a message or a task. */
const words = fc.subarray([...WORDS, ABSENT_WORD], { minLength: 1, maxLength: 3 });
/** The words of a query: mostly one, so it hits, sometimes two, sometimes one nobody wrote. */
const queryWords = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...WORDS).map((word) => [word]) },
  { weight: 2, arbitrary: fc.subarray([...WORDS], { minLength: 2, maxLength: 2 }) },
  { weight: 1, arbitrary: fc.constant<string[]>([ABSENT_WORD]) },
);

const caller: fc.Arbitrary<CallerChoice> = fc.record({
  requester: fc.nat({ max: 63 }),
  visibility: fc.constantFrom<Visibility>('self', 'tree', 'agent', 'all'),
  sandboxed: fc.oneof(
    { weight: 3, arbitrary: fc.constant(false) },
    { weight: 1, arbitrary: fc.constant(true) },
  ),
  sandboxClamp: fc.constantFrom<'spawned' | 'all'>('spawned', 'all'),
  agentToAgent: fc.record({
    enabled: fc.boolean(),
    allow: fc.subarray(['main', 'ops', 'sec', '*']),
  }),
});

const target: fc.Arbitrary<TargetChoice> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({
      type: fc.constant('known' as const),
      index: fc.nat({ max: 63 }),
      spelling: fc.constantFrom<'key' | 'loud' | 'sessionId'>('key', 'key', 'loud', 'sessionId'),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      type: fc.constant('missing' as const),
      index: fc.nat({ max: MISSING_KEYS.length - 1 }),
      spelling: fc.constantFrom<'key' | 'sessionId'>('key', 'sessionId'),
    }),
  },
  { weight: 1, arbitrary: fc.constant({ type: 'alias' as const }) },
  { weight: 1, arbitrary: fc.constant({ type: 'reserved' as const }) },
);

const sendTarget: fc.Arbitrary<SendTargetChoice> = fc.oneof(
  { weight: 4, arbitrary: target },
  {
    weight: 1,
    arbitrary: fc.record(
      {
        type: fc.constant('label' as const),
        label: fc.constantFrom(...SEND_LABELS),
        agentId: fc.constantFrom(...AGENTS),
      },
      { requiredKeys: ['type', 'label'] },
    ),
  },
);

const kinds = fc.subarray([...KINDS], { minLength: 1, maxLength: 2 });

/** One random step; reads are more frequent than writes, deletes the rarest. */
export const stepArbitrary: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record(
      {
        tool: fc.constant('sessions_list' as const),
        caller,
        kinds,
        limit: fc.integer({ min: 1, max: 30 }),
        offset: rarely(fc.integer({ min: 1, max: 8 })),
        messageLimit: rarely(fc.integer({ min: 0, max: 3 })),
      },
      { requiredKeys: ['tool', 'caller'] },
    ),
  },
  {
    weight: 3,
    arbitrary: fc.record(
      {
        tool: fc.constant('sessions_history' as const),
        caller,
        target,
        limit: fc.integer({ min: 1, max: 20 }),
        includeTools: fc.boolean(),
      },
      { requiredKeys: ['tool', 'caller', 'target'] },
    ),
  },
  {
    weight: 2,
    arbitrary: fc.record(
      { tool: fc.constant('session_status' as const), caller, target },
      { requiredKeys: ['tool', 'caller'] },
    ),
  },
  {
    weight: 4,
    arbitrary: fc.record(
      {
        tool: fc.constant('sessions_search' as const),
        caller,
        words: queryWords,
        target: rarely(target),
        kinds,
        limit: fc.integer({ min: 1, max: 50 }),
        offset: rarely(fc.integer({ min: 1, max: 6 })),
      },
      { requiredKeys: ['tool', 'caller', 'words'] },
    ),
  },
  {
    weight: 3,
    arbitrary: fc.record({ tool: fc.constant('sessions_send' as const), caller, target: sendTarget, words }),
  },
  {
    weight: 2,
    arbitrary: fc.record(
      {
        tool: fc.constant('sessions_spawn' as const),
        caller,
        words,
        agentId: fc.constantFrom(...AGENTS),
        context: fc.constantFrom<'isolated' | 'fork'>('isolated', 'fork'),
        label: fc.constantFrom(...SPAWN_LABELS),
        cleanup: fc.constantFrom<'keep' | 'delete'>('keep', 'delete'),
      },
      { requiredKeys: ['tool', 'caller', 'words'] },
    ),
  },
  { weight: 1, arbitrary: fc.record({ tool: fc.constant('sessions.delete' as const), target }) },
);

// --- resolution against the world ---

/** Where a call's target points in the model. */
export interface ResolvedTarget {
  /** The existing session it names, by key (placeholder form); undefined when none does. */
  key?: string;
  /** True when it names a reserved key. */
  reserved: boolean;
  /** For a label: the existing sessions of the label's agent that carry it. */
  labelled?: string[];
}

/** A step made concrete: a tool call by one requester, or a gateway call. */
export type ResolvedCall =
  | {
      type: 'tool';
      step: Step;
      tool: Exclude<Step['tool'], 'sessions.delete'>;
      requester: string;
      agentId: string;
      settings: AccessSettings;
      /** The arguments, ids in placeholder form. */
      args: Record<string, unknown>;
      /** The session the call names (sessionKey or label), if it names one. */
      target?: ResolvedTarget;
    }
  | {
      type: 'gateway';
      step: Step;
      method: 'sessions.delete';
      params: { key: string };
      target: ResolvedTarget;
    };

/**
 * Makes a step concrete in the current world, or returns undefined when it cannot run (no session
 * may call).
 */
export function resolveStep(step: Step, world: World): ResolvedCall | undefined {
  if (step.tool === 'sessions.delete') {
    const { text, target } = resolveTarget(step.target, world, undefined);
    return { type: 'gateway', step, method: 'sessions.delete', params: { key: text }, target };
  }
  const callers = world.existing().filter((s) => s.key !== 'global');
  if (callers.length === 0) return undefined;
  const requester = callers[step.caller.requester % callers.length]!;
  const settings: AccessSettings = {
    visibility: step.caller.visibility,
    sandboxed: step.caller.sandboxed,
    sandboxClamp: step.caller.sandboxClamp,
    agentToAgent: step.caller.agentToAgent,
    defaultAgent: DEFAULT_AGENT,
  };
  const base = {
    type: 'tool' as const,
    step,
    tool: step.tool,
    requester: requester.key,
    agentId: requester.agentId,
    settings,
  };
  const named = (choice: TargetChoice | undefined) =>
    choice === undefined ? undefined : resolveTarget(choice, world, requester.agentId);
  switch (step.tool) {
    case 'sessions_list':
      return { ...base, args: pick(step, ['kinds', 'limit', 'offset', 'messageLimit']) };
    case 'sessions_history': {
      const { text, target } = named(step.target)!;
      return { ...base, args: { sessionKey: text, ...pick(step, ['limit', 'includeTools']) }, target };
    }
    case 'session_status': {
      const found = named(step.target);
      return found
        ? { ...base, args: { sessionKey: found.text }, target: found.target }
        : { ...base, args: {}, target: { key: requester.key, reserved: false } };
    }
    case 'sessions_search': {
      const found = named(step.target);
      return {
        ...base,
        args: {
          query: step.words.join(' '),
          ...(found ? { sessionKey: found.text } : {}),
          ...pick(step, ['kinds', 'limit', 'offset']),
        },
        ...(found ? { target: found.target } : {}),
      };
    }
    case 'sessions_send': {
      const message = step.words.join(' ');
      if (step.target.type === 'label') {
        const owner = step.target.agentId ?? requester.agentId;
        const { label } = step.target;
        const labelled = world
          .existing()
          .filter((s) => s.agentId === owner && s.label === label)
          .map((s) => s.key);
        return {
          ...base,
          args: { label, ...pick(step.target, ['agentId']), message, timeoutSeconds: 0 },
          target: { reserved: false, labelled },
        };
      }
      const { text, target } = named(step.target)!;
      return { ...base, args: { sessionKey: text, message, timeoutSeconds: 0 }, target };
    }
    case 'sessions_spawn':
      return {
        ...base,
        args: { task: step.words.join(' '), ...pick(step, ['agentId', 'context', 'label', 'cleanup']) },
      };
  }
}

function resolveTarget(
  choice: TargetChoice,
  world: World,
  agentId: string | undefined,
): { text: string; target: ResolvedTarget } {
  switch (choice.type) {
    case 'alias': {
      const key = `agent:${agentId ?? DEFAULT_AGENT}:main`;
      return { text: 'main', target: { key: world.get(key)?.key, reserved: false } };
    }
    case 'reserved':
      return { text: 'global', target: { key: world.get('global')?.key, reserved: true } };
    case 'missing': {
      const key = MISSING_KEYS[choice.index % MISSING_KEYS.length]!;
      return {
        text: choice.spelling === 'key' ? key : `sid-ghost-${choice.index}`,
        target: { reserved: false },
      };
    }
    case 'known': {
      const all = world.all();
      const session = all[choice.index % all.length]!;
      const text =
        choice.spelling === 'sessionId'
          ? session.sessionId
          : choice.spelling === 'loud'
            ? loud(session.key)
            : session.key;
      return {
        text,
        target: { key: session.exists ? session.key : undefined, reserved: session.key === 'global' },
      };
    }
  }
}

/** The key spelled with upper-case fixed words and agent id and stray spaces: the same session. */
function loud(key: string): string {
  const spelled = key.replace(/^agent:([^:]+):/, (_, id: string) => `AGENT:${id.toUpperCase()}:`);
  return ` ${spelled.replace(/^cron:/, 'CRON:')}\n`;
}

function pick<T extends object, K extends keyof T>(source: T, keys: readonly K[]): Partial<Pick<T, K>> {
  const out: Partial<Pick<T, K>> = {};
  for (const key of keys) if (source[key] !== undefined) out[key] = source[key];
  return out;
}
