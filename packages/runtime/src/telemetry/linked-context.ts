import type { Context } from '@opentelemetry/api';

/** The key of a link that only wraps its parent. */
const NO_KEY = Symbol('colloquy.linked-context.none');

/** Links past which a context is flattened, so a lookup never walks a long chain. */
const MAX_DEPTH = 16;

/**
 * A `Context` that holds one value on top of its parent instead of copying the parent's values.
 * The API's contexts copy every value into a new `Map`, with three new closures, on each
 * `setValue`: a turn sets a span or a tree id about five times, which made contexts the largest
 * part of what tracing allocates per turn. Values are looked up along the links (a few deep).
 */
class LinkedContext implements Context {
  constructor(
    private readonly parent: Context,
    private readonly key: symbol,
    private readonly value: unknown,
    private readonly depth: number,
  ) {}

  getValue(key: symbol): unknown {
    return key === this.key ? this.value : this.parent.getValue(key);
  }

  setValue(key: symbol, value: unknown): Context {
    return this.depth < MAX_DEPTH
      ? new LinkedContext(this, key, value, this.depth + 1)
      : this.flat().setValue(key, value);
  }

  deleteValue(key: symbol): Context {
    // A link to `undefined` hides the parent's value: `getValue` answers as after a delete.
    return this.setValue(key, undefined);
  }

  /** The same values on the context this chain started from, set with its own `setValue`. */
  private flat(): Context {
    const values = new Map<symbol, unknown>();
    let at: Context = this;
    while (at instanceof LinkedContext) {
      if (at.key !== NO_KEY && !values.has(at.key)) values.set(at.key, at.value);
      at = at.parent;
    }
    let flat = at;
    for (const [key, value] of values) {
      flat = value === undefined ? flat.deleteValue(key) : flat.setValue(key, value);
    }
    return linkedContext(flat);
  }
}

/**
 * `ctx`, made cheap to derive from: `setValue` and `deleteValue` on the result (and on what they
 * return) add a link instead of copying every value.
 *
 * @param ctx - any context (the active one, `ROOT_CONTEXT`, another tracer's)
 * @returns a context with the same values
 */
export function linkedContext(ctx: Context): Context {
  return ctx instanceof LinkedContext ? ctx : new LinkedContext(ctx, NO_KEY, undefined, 0);
}
