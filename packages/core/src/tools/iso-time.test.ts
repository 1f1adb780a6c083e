import { describe, expect, it } from 'vitest';
import { isoWithOffset } from './iso-time.js';

describe('isoWithOffset', () => {
  it('prints local time with a ±hh:mm offset that denotes the same instant', () => {
    const date = new Date(Date.UTC(2026, 10, 23, 9, 5, 7, 12));
    const text = isoWithOffset(date);
    expect(text).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}[+-]\d{2}:\d{2}$/);
    expect(new Date(text).getTime()).toBe(date.getTime());
  });
});
