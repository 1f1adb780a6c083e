import { createContextKey, ROOT_CONTEXT, trace } from '@opentelemetry/api';
import { describe, expect, it } from 'vitest';
import { linkedContext } from './linked-context.js';

const A = createContextKey('test.a');
const B = createContextKey('test.b');

describe('linkedContext', () => {
  it('reads, sets and deletes values as the API root context does, leaving its parents alone', () => {
    const base = ROOT_CONTEXT.setValue(A, 'from base');
    const linked = linkedContext(base);
    expect(linked.getValue(A)).toBe('from base');
    const withB = linked.setValue(B, 2);
    const replaced = withB.setValue(A, 'replaced');
    const deleted = replaced.deleteValue(A);
    expect([withB.getValue(A), withB.getValue(B)]).toEqual(['from base', 2]);
    expect(replaced.getValue(A)).toBe('replaced');
    expect([deleted.getValue(A), deleted.getValue(B)]).toEqual([undefined, 2]);
    expect([linked.getValue(B), base.getValue(B), base.getValue(A)]).toEqual([
      undefined,
      undefined,
      'from base',
    ]);
    expect(linkedContext(withB)).toBe(withB);
  });

  it('carries a span for the trace API', () => {
    const span = trace.wrapSpanContext({ traceId: 'a'.repeat(32), spanId: 'b'.repeat(16), traceFlags: 1 });
    const ctx = trace.setSpan(linkedContext(ROOT_CONTEXT), span);
    expect(trace.getSpan(ctx)).toBe(span);
    expect(trace.getSpan(trace.deleteSpan(ctx))).toBeUndefined();
  });

  it('keeps every value, deletes included, when a long chain is flattened', () => {
    const keys = Array.from({ length: 40 }, (_, i) => createContextKey(`test.k${i}`));
    let ctx = linkedContext(ROOT_CONTEXT.setValue(A, 'kept'));
    for (const [i, key] of keys.entries()) ctx = ctx.setValue(key, i);
    ctx = ctx.deleteValue(keys[3]!).setValue(keys[5]!, 'last');
    for (let i = 0; i < 20; i++) ctx = ctx.setValue(B, i);
    expect(keys.map((key) => ctx.getValue(key))).toEqual(
      keys.map((_, i) => (i === 3 ? undefined : i === 5 ? 'last' : i)),
    );
    expect([ctx.getValue(A), ctx.getValue(B)]).toEqual(['kept', 19]);
  });
});
