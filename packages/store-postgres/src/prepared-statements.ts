import type pg from 'pg';
import type { Queryable } from './pg-operations.js';

/** How many distinct statement texts get a name; the rest run unnamed. */
const DEFAULT_MAX_NAMED = 256;

/**
 * Names for server-side prepared statements. PostgreSQL parses and plans an unnamed statement every
 * time it runs; a named one is parsed once per connection and, after a few runs, keeps a generic
 * plan. The store's texts are built by its code from a few shapes, so naming them costs each
 * connection a bounded set of prepared statements; the cap keeps that bound whatever texts `sql()`
 * is given.
 */
export class StatementNames {
  // A Map, not lru-cache: nothing may be evicted, since a name prepared on a connection keeps its text.
  private readonly names = new Map<string, string>();

  /** @param max - the most texts that get a name */
  constructor(private readonly max: number = DEFAULT_MAX_NAMED) {}

  /** The name of `text`, given on first sight; `undefined` once `max` texts have one. */
  nameOf(text: string): string | undefined {
    let name = this.names.get(text);
    if (name === undefined && this.names.size < this.max) {
      name = `colloquy_${this.names.size + 1}`;
      this.names.set(text, name);
    }
    return name;
  }
}

/**
 * `target` (the pool or one connection) as a {@link Queryable} whose statements run as named
 * prepared statements while `names` has room.
 */
export function preparedQueryable(target: pg.Pool | pg.ClientBase, names: StatementNames): Queryable {
  return {
    query: (text, values) => {
      const name = names.nameOf(text);
      return target.query(name === undefined ? { text, values } : { name, text, values });
    },
  };
}
