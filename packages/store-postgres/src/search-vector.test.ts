import { describe, expect, it } from 'vitest';
import { searchQuery, searchVector } from './search-vector.js';

const say = (text: string) => ({ role: 'user' as const, content: text, timestamp: 1 });

describe('searchVector', () => {
  it("lists core's words with their positions, lower-cased and with secrets redacted", () => {
    expect(searchVector(say('Crane, harbour CRANE: bob@corp.io'))).toBe(
      "'crane':1,3 'harbour':2 'bob':4 'corp':5 'io':6",
    );
    expect(searchVector(say('pw at postgres://app:hunter99@db'))).toBe(
      "'pw':1 'at':2 'postgres':3 'app':4 'db':5",
    );
  });

  it('keeps at most 256 positions of a word, and none past 16,383', () => {
    const vector = searchVector(say(`${'a '.repeat(16_383)}z`));
    expect(vector.split(' ').map((lexeme) => lexeme.split(':')[0])).toEqual(["'a'", "'z'"]);
    expect(vector.split(' ')[0]!.split(',')).toHaveLength(256);
    expect(vector.endsWith("'z':16383")).toBe(true);
  });

  it('is empty for a message search does not index', () => {
    expect(searchVector({ role: 'toolResult', content: 'out', toolCallId: 'c', timestamp: 1 })).toBe('');
    expect(searchVector(say('*** ---'))).toBe('');
  });
});

describe('searchQuery', () => {
  it('asks for every term as it stands', () => {
    expect(searchQuery(['harbour', 'москве'])).toBe("'harbour' & 'москве'");
  });
});
