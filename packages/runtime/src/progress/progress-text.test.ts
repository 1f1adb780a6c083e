import { describe, expect, it } from 'vitest';
import { finishedLine, formatDuration, workingLine } from './progress-text.js';

describe('progress text', () => {
  it('says durations in seconds, minutes and hours', () => {
    expect(formatDuration(40_400)).toBe('40 s');
    expect(formatDuration(70_000)).toBe('1 min 10 s');
    expect(formatDuration(120_000)).toBe('2 min');
    expect(formatDuration(3_900_000)).toBe('1 h 5 min');
    expect(formatDuration(-5)).toBe('0 s');
  });

  it('names the working helpers with their time or queued, and counts the ended ones', () => {
    const now = 100_000;
    const line = workingLine(
      [
        { label: 'research', state: 'running', startedAt: now - 40_000 },
        { label: 'summary', state: 'queued' },
        { label: 'draft', state: 'ok' },
        { label: 'check', state: 'failed' },
      ],
      now,
    );
    expect(line).toBe('2 helpers working: research (40 s), summary (queued) · 1 done, 1 failed');
  });

  it('names five helpers at most and shortens long labels', () => {
    const helpers = Array.from({ length: 7 }, (_, i) => ({
      label: i === 0 ? `a very long label ${'x'.repeat(60)}` : `h${i}`,
      state: 'queued' as const,
    }));
    const line = workingLine(helpers, 0);
    expect(line).toMatch(/^7 helpers working: a very long label x+… \(queued\), h1/);
    expect(line).toContain('h4 (queued), 2 more');
  });

  it('sums up a finished round with its failures', () => {
    expect(finishedLine([{ label: 'a', state: 'ok' }], 5_000)).toBe('1 helper finished in 5 s');
    const three = [
      { label: 'a', state: 'ok' as const },
      { label: 'b', state: 'failed' as const },
      { label: 'c', state: 'ok' as const },
    ];
    expect(finishedLine(three, 70_000)).toBe('3 helpers finished in 1 min 10 s (1 failed)');
  });
});
