import type { TranscriptMessage } from '@colloquy/core';
import { SEARCH_INDEX_MAX_CHARS, searchableText, searchWords } from '@colloquy/core/store';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  indexedTextSql,
  indexPendingSql,
  MESSAGE_INDEX,
  planMessageSearch,
  SEARCH_TOKENIZER,
} from './message-search-sql.js';
import { migrate } from './migrations.js';
import { defineSearchWordsFunction, SEARCH_WORDS_FUNCTION } from './search-words-function.js';

let db: Database.Database;

beforeAll(() => {
  db = new Database(':memory:');
  defineSearchWordsFunction(db);
  migrate(db);
});
afterAll(() => db.close());

function explain(sql: string, params: unknown[]): string[] {
  return (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...params) as { detail: string }[]).map(
    (r) => r.detail,
  );
}

const text = (block: unknown) => ({ type: 'text', text: block });
// Shapes a transcript may hold, including ones the types forbid but a JSON column can carry.
const messages: unknown[] = [
  { role: 'user', content: 'a plain string' },
  { role: 'user', content: '' },
  { role: 'assistant', content: [text('one block')] },
  { role: 'assistant', content: [text('first'), { type: 'image', data: 'x' }, text('second')] },
  { role: 'assistant', content: [{ type: 'thinking', thinking: 'hidden' }] },
  {
    role: 'assistant',
    content: [{ type: 'toolCall', name: 'x', arguments: { text: 'args' } }, text('shown')],
  },
  { role: 'assistant', content: [] },
  { role: 'assistant', content: [text(5)] },
  { role: 'assistant', content: [text(null), text('kept')] },
  { role: 'user', content: ['a bare string block'] },
  { role: 'user', content: ['bare', text('after a bare string'), 7, null, [text('nested')]] },
  { role: 'user', content: [{ type: 'text' }] },
  { role: 'user', content: { type: 'text', text: 'an object, not a list' } },
  { role: 'user', content: 42 },
  { role: 'user' },
  { role: 'toolResult', content: 'tool output' },
  { role: 'toolResult', content: [text('tool output')] },
  { role: 'user', content: 'x'.repeat(SEARCH_INDEX_MAX_CHARS + 10) },
  { role: 'assistant', content: [text('y'.repeat(SEARCH_INDEX_MAX_CHARS)), text('cut away')] },
  { role: 'user', content: 'ünïcödé, emoji 🙂 and "quotes"' },
];

describe('planMessageSearch', () => {
  it('quotes every word, so no query text is read as FTS syntax', () => {
    const plan = planMessageSearch({ text: 'crane AND "port* NEAR(x' });
    expect(plan?.count.params).toEqual(['"crane" "and" "port" "near" "x"']);
    expect(planMessageSearch({ text: '*** ""' })).toBeUndefined();
    expect(planMessageSearch({ text: 'x', keys: [] })).toBeUndefined();
  });

  it('finds hits through the full-text index and joins rows by key, never scanning the transcripts', () => {
    const plan = planMessageSearch({
      text: 'harbour crane',
      kinds: ['group'],
      agentIds: ['main'],
      limit: 10,
    });
    const details = explain(plan!.hits!.sql, plan!.hits!.params);
    expect(details.some((d) => /VIRTUAL TABLE INDEX/.test(d))).toBe(true);
    expect(details.some((d) => /^SCAN (m|messages)\b/.test(d))).toBe(false);
    expect(details.some((d) => /^SCAN (s|sessions)\b/.test(d))).toBe(false);
  });

  it('counts without joins when no session filter is given, and skips the hit query for limit 0', () => {
    const plan = planMessageSearch({ text: 'crane', limit: 0 });
    expect(plan?.hits).toBeUndefined();
    expect(plan?.count.sql).not.toContain('JOIN');
  });
});

describe('indexedTextSql', () => {
  it.each(messages.map((m) => [JSON.stringify(m).slice(0, 80), m]))(
    'picks the text core picks: %s',
    (_, message) => {
      const sql = `SELECT ${indexedTextSql('m')} FROM (SELECT ? AS m)`;
      const indexed = db.prepare(sql).pluck().get(JSON.stringify(message)) as string | null;
      expect(indexed ?? undefined).toEqual(searchableText(message as TranscriptMessage));
    },
  );
});

describe(SEARCH_WORDS_FUNCTION, () => {
  it.each(messages.map((m) => [JSON.stringify(m).slice(0, 80), m]))(
    "gives core's words of the text, joined by spaces: %s",
    (_, message) => {
      const indexed = db.prepare(`SELECT ${SEARCH_WORDS_FUNCTION}(?)`).pluck().get(JSON.stringify(message));
      const text = searchableText(message as TranscriptMessage);
      const words = text === undefined ? [] : searchWords(text);
      expect(indexed).toBe(words.length === 0 ? null : words.join(' '));
    },
  );

  it('redacts a secret before indexing, and every word is one token of the index', () => {
    const key = ['sk-proj-', '4f9A8b7C6d5E4f3G2h1I0', 'jKlMnOpQrStUv'].join('');
    const message = { role: 'user', content: `Key ${key} at bob@corp.io, v1.2.3 Über🚀Москве` };
    const indexed = db.prepare(`SELECT ${SEARCH_WORDS_FUNCTION}(?)`).pluck().get(JSON.stringify(message));
    expect(indexed).toBe('key redacted at bob corp io v1 2 3 über москве');
    db.exec(`CREATE VIRTUAL TABLE temp.words USING fts5(body, tokenize = '${SEARCH_TOKENIZER}');
      CREATE VIRTUAL TABLE temp.word_vocab USING fts5vocab(temp, words, 'row')`);
    db.prepare('INSERT INTO temp.words (body) VALUES (?)').run(indexed);
    const tokens = db.prepare('SELECT term FROM temp.word_vocab').pluck().all();
    expect(tokens.sort()).toEqual(String(indexed).split(' ').sort());
  });
});

describe('indexPendingSql', () => {
  it('reads only the messages after the watermark and computes their text once (materialized)', () => {
    const details = explain(indexPendingSql(MESSAGE_INDEX), []);
    expect(details).toContain('MATERIALIZE pending');
    expect(details.some((d) => /^SEARCH messages USING INTEGER PRIMARY KEY \(rowid>\?\)/.test(d))).toBe(true);
    expect(details.some((d) => /^SCAN messages\b/.test(d))).toBe(false);
  });
});
