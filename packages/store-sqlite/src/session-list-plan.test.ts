import type { SessionListQuery } from '@colloquy/core/store';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate } from './migrations.js';
import { planSessionList } from './session-list-plan.js';

const NOW = 1_700_000_000_000;
let db: Database.Database;

beforeAll(() => {
  db = new Database(':memory:');
  migrate(db);
});
afterAll(() => db.close());

/** The `detail` lines of SQLite's query plan for every statement of the plan. */
function explain(query: SessionListQuery, mode: 'rows' | 'count' = 'rows'): string[] {
  return planSessionList(query, mode, NOW).parts.flatMap((part) =>
    (db.prepare(`EXPLAIN QUERY PLAN ${part.sql}`).all(...part.params) as { detail: string }[]).map(
      (row) => row.detail,
    ),
  );
}

describe('planSessionList', () => {
  const common: [string, SessionListQuery][] = [
    ['no filter, limit 200', { limit: 200 }],
    ['one kind, limit 200', { kinds: ['group'], limit: 200 }],
    ['two kinds, limit 200', { kinds: ['dm', 'group'], limit: 200 }],
    ['activeMinutes, limit 200', { activeMinutes: 60, limit: 200 }],
    ['kinds and activeMinutes', { kinds: ['subagent'], activeMinutes: 60, limit: 200 }],
    ['spawnedBy', { spawnedBy: 'agent:main:main', limit: 200 }],
    ['archived included', { includeArchived: true, limit: 200 }],
    [
      'archived included with kinds',
      { includeArchived: true, kinds: ['main'], activeMinutes: 5, limit: 200 },
    ],
    ['agentIds', { agentIds: ['main'], limit: 200 }],
  ];

  it.each(common)('walks an index in list order for %s (no table scan, no sort)', (_, query) => {
    const plan = explain(query);
    expect(plan.length).toBeGreaterThan(0);
    for (const line of plan.filter((l) => /\bsessions\b/.test(l)))
      expect(line).toMatch(/USING (COVERING )?INDEX/);
    expect(plan.join('\n')).not.toMatch(/TEMP B-TREE/);
  });

  it('searches (not scans) the index when a kind or a time window bounds the walk', () => {
    expect(explain({ kinds: ['group'], activeMinutes: 60 })).toEqual([
      expect.stringMatching(
        /^SEARCH sessions USING INDEX sessions_live_by_kind \(kind=\? AND updated_at>\?\)/,
      ),
    ]);
    expect(explain({ activeMinutes: 60 })).toEqual([
      expect.stringMatching(/^SEARCH sessions USING INDEX sessions_live_recent \(updated_at>\?\)/),
    ]);
  });

  it('looks keys up by primary key', () => {
    expect(explain({ keys: ['a', 'b'] }).join('\n')).toMatch(
      /SEARCH sessions USING INDEX sqlite_autoindex_sessions_1 \(key=\?\)/,
    );
  });

  it('probes the spawner index once per spawner for a level of a spawn tree, in a list and a count', () => {
    const query: SessionListQuery = { spawnedBy: ['agent:main:main', 'agent:main:subagent:a'] };
    for (const mode of ['rows', 'count'] as const) {
      expect(explain(query, mode)).toContainEqual(
        expect.stringMatching(
          /^SEARCH sessions USING (COVERING )?INDEX sessions_by_spawner \(spawned_by=\?\)/,
        ),
      );
    }
    expect(planSessionList({ spawnedBy: [] }, 'rows', NOW).parts).toEqual([]);
  });

  it('merges several kinds as ordered streams, not by sorting, and counts from indexes alone', () => {
    const plan = explain({ kinds: ['dm', 'group', 'cron'], limit: 200 });
    expect(plan).toContain('MERGE (UNION ALL)');
    expect(
      plan.filter((line) => line.startsWith('SEARCH sessions USING INDEX sessions_live_by_kind')),
    ).toHaveLength(3);
    const counted: SessionListQuery[] = [
      {},
      { kinds: ['dm', 'group'] },
      { activeMinutes: 60 },
      { kinds: ['dm'], activeMinutes: 60 },
    ];
    for (const query of counted) {
      for (const line of explain(query, 'count')) expect(line).toMatch(/COVERING INDEX/);
    }
  });

  it('merges the live walk with the archived walk when archived sessions are included', () => {
    const plan = explain({ includeArchived: true, limit: 200 });
    expect(plan).toContain('MERGE (UNION ALL)');
    expect(plan).toContain('SCAN sessions USING INDEX sessions_live_recent');
    expect(plan).toContain('SCAN sessions USING INDEX sessions_archived_recent');
    const perKind = explain({ includeArchived: true, kinds: ['dm', 'group'], limit: 200 });
    expect(
      perKind.filter((line) => /USING INDEX sessions_(live|archived)_by_kind \(kind=\?\)/.test(line)),
    ).toHaveLength(4);
    expect(planSessionList({ includeArchived: true, kinds: ['dm'] }, 'count', NOW).parts).toHaveLength(2);
    for (const line of explain({ includeArchived: true, kinds: ['dm', 'group'] }, 'count')) {
      expect(line).toMatch(/COVERING INDEX sessions_(live|archived)_by_kind/);
    }
  });

  it('counts through the same indexes', () => {
    for (const [, query] of common) {
      for (const line of explain(query, 'count').filter((l) => /\bsessions\b/.test(l))) {
        expect(line).toMatch(/USING (COVERING )?INDEX/);
      }
    }
  });

  it('answers empty filters and a zero limit without touching the database', () => {
    expect(planSessionList({ keys: [] }, 'rows', NOW).parts).toEqual([]);
    expect(planSessionList({ agentIds: [] }, 'count', NOW).parts).toEqual([]);
    expect(planSessionList({ limit: 0 }, 'rows', NOW).parts).toEqual([]);
    expect(planSessionList({ limit: 0 }, 'count', NOW).parts).toHaveLength(1);
  });

  it('binds each kind once, then the limit and the offset last', () => {
    expect(planSessionList({ kinds: ['dm', 'dm'] }, 'rows', NOW).parts[0]?.params).toEqual(['dm', -1, 0]);
    const plan = planSessionList(
      { kinds: ['dm', 'group'], activeMinutes: 1, limit: 5, offset: 2.5 },
      'rows',
      NOW,
    );
    expect(plan.parts).toHaveLength(1);
    expect(plan.parts[0]?.params).toEqual(['dm', NOW - 60_000, 'group', NOW - 60_000, 5, 2]);
    expect(planSessionList({ kinds: ['dm', 'group'] }, 'count', NOW).parts.map((p) => p.params)).toEqual([
      ['dm'],
      ['group'],
    ]);
  });
});

describe('transcript tail query', () => {
  it('reads the tail backwards through the session index without sorting', () => {
    const plan = db
      .prepare(
        'EXPLAIN QUERY PLAN SELECT message FROM messages WHERE session_key = ? AND seq < ? ORDER BY seq DESC LIMIT ?',
      )
      .all('k', 10, 20) as { detail: string }[];
    expect(plan.map((r) => r.detail)).toEqual([
      expect.stringMatching(/^SEARCH messages USING INDEX messages_by_session \(session_key=\? AND seq<\?\)/),
    ]);
  });
});
