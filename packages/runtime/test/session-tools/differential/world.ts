import type { SessionKind } from '@colloquy/core/gateway';
import type { SessionFacts, SessionLookup } from '../expected-visibility.js';

/**
 * The world the differential suite starts from, the same on every store, and the model's record
 * of it as the steps change it: which sessions exist, who spawned them, which were forked.
 */

/** The agents of the suite: `main` (the default), `ops`, and `sec` (which runs sandboxed). */
export const AGENTS = ['main', 'ops', 'sec'] as const;
export const DEFAULT_AGENT = 'main';
/** The other agents each agent may spawn sub-agents as (`agents.list[].subagents.allowAgents`). */
export const SPAWNS_AS: Record<string, readonly string[]> = { main: ['ops'], ops: ['sec'], sec: [] };
/** The agents that run sandboxed (`agents.list[].sandboxed`). */
export const SANDBOXED_AGENTS: readonly string[] = ['sec'];
/** `agents.defaults.subagents.maxSpawnDepth`: sub-agents may spawn once more. */
export const MAX_SPAWN_DEPTH = 2;

/**
 * The words messages are made of: plain lower-case ASCII that no generated id or runtime text
 * contains, so searches hit only what the steps wrote.
 */
export const WORDS = ['amber', 'basalt', 'cedar', 'delta', 'ember', 'fjord'] as const;
/** A word no message ever holds. */
export const ABSENT_WORD = 'zircon';

/** A session of the starting world. */
export interface SeedSession {
  key: string;
  kind: SessionKind;
  label?: string;
  spawnedBy?: string;
  forked?: boolean;
  /** True for the session with a chat (the memory channel's `user-1`). */
  chat?: boolean;
}

/**
 * Main, DM, group and sub-agent sessions of three agents; sub-agents spawned across agents and
 * forked ones; a cron session (the default agent's); the reserved `global`, which holds words too.
 */
export const SEED_SESSIONS: readonly SeedSession[] = [
  { key: 'agent:main:main', kind: 'main', chat: true },
  { key: 'agent:main:telegram:dm:alice', kind: 'dm', label: 'alice' },
  { key: 'agent:main:telegram:group:team', kind: 'group', label: 'team' },
  { key: 'agent:main:subagent:seed-kid', kind: 'subagent', spawnedBy: 'agent:main:main', label: 'helper' },
  {
    key: 'agent:main:subagent:seed-fork',
    kind: 'subagent',
    spawnedBy: 'agent:main:telegram:dm:alice',
    forked: true,
  },
  { key: 'agent:ops:subagent:seed-fork', kind: 'subagent', spawnedBy: 'agent:main:main', forked: true },
  { key: 'cron:nightly', kind: 'cron' },
  { key: 'agent:ops:main', kind: 'main' },
  { key: 'agent:ops:discord:dm:bob', kind: 'dm', label: 'bob' },
  { key: 'agent:ops:discord:group:ops-room', kind: 'group', label: 'team' },
  { key: 'agent:ops:subagent:seed-kid', kind: 'subagent', spawnedBy: 'agent:ops:discord:dm:bob' },
  { key: 'agent:sec:main', kind: 'main' },
  { key: 'agent:sec:slack:group:vault', kind: 'group', label: 'vault' },
  { key: 'global', kind: 'other' },
];

/** Keys no session ever has. */
export const MISSING_KEYS = [
  'agent:main:telegram:group:ghost',
  'agent:ops:subagent:ghost',
  'agent:sec:discord:dm:nobody',
] as const;

/** The sessionId of a seeded session (fixed, so it is the same on every store). */
export function seedSessionId(index: number): string {
  return `sid-seed-${index}`;
}

/** The texts of a seeded session's transcript: a few messages of two or three words each. */
export function seedTexts(index: number): string[] {
  return [0, 1, 2].map((m) =>
    [0, 1, 2]
      .slice(0, 2 + ((index + m) % 2))
      .map((w) => WORDS[(index * 2 + m + w * 3) % WORDS.length])
      .join(' '),
  );
}

/** A session as the model knows it. Keys and ids are in placeholder form (see `Placeholders`). */
export interface WorldSession {
  key: string;
  agentId: string;
  kind: SessionKind;
  label?: string;
  spawnedBy?: string;
  forked: boolean;
  spawnDepth: number;
  sessionId: string;
  exists: boolean;
}

/** The model's record of which sessions exist, in the order they were made. */
export class World {
  private readonly sessions: WorldSession[] = [];

  constructor() {
    for (const [index, seed] of SEED_SESSIONS.entries()) {
      this.add({
        key: seed.key,
        agentId: /^agent:([^:]+):/.exec(seed.key)?.[1] ?? DEFAULT_AGENT,
        kind: seed.kind,
        ...(seed.label ? { label: seed.label } : {}),
        ...(seed.spawnedBy ? { spawnedBy: seed.spawnedBy } : {}),
        forked: seed.forked ?? false,
        spawnDepth: seed.spawnedBy ? 1 : 0,
        sessionId: seedSessionId(index),
        exists: true,
      });
    }
  }

  /** Every session ever made, deleted ones included, oldest first. */
  all(): readonly WorldSession[] {
    return this.sessions;
  }

  /** The sessions that exist now, oldest first. */
  existing(): WorldSession[] {
    return this.sessions.filter((s) => s.exists);
  }

  /** The existing session with this key. */
  get(key: string): WorldSession | undefined {
    return this.sessions.find((s) => s.key === key && s.exists);
  }

  /** The facts the visibility model needs, of existing sessions only. */
  readonly lookup: SessionLookup = (key) => {
    const session = this.get(key);
    if (!session) return undefined;
    const facts: SessionFacts = { forked: session.forked };
    if (session.spawnedBy !== undefined) facts.spawnedBy = session.spawnedBy;
    return facts;
  };

  add(session: WorldSession): void {
    this.sessions.push(session);
  }

  remove(key: string): void {
    const session = this.get(key);
    if (session) session.exists = false;
  }
}
