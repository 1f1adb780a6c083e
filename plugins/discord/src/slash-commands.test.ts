import { describe, expect, it } from 'vitest';
import { toCommandPayload } from './slash-commands.js';

describe('toCommandPayload', () => {
  it('registers status, sessions and subagents when the app announces no commands', () => {
    expect(toCommandPayload([]).map((c) => c.name)).toEqual(['status', 'sessions', 'subagents']);
  });

  it('fits names and descriptions to Discord rules and drops duplicates', () => {
    const payload = toCommandPayload([
      { name: '/Status', description: 'x'.repeat(150) },
      { name: 'status', description: 'again' },
      { name: 'send policy', description: '' },
    ]);
    expect(payload.map((c) => c.name)).toEqual(['status', 'send-policy']);
    const [status, sendPolicy] = payload as { description: string; options: unknown }[];
    expect(status!.description).toHaveLength(100);
    expect(sendPolicy!.description).toBe('send-policy');
    expect(status!.options).toEqual([{ type: 3, name: 'args', description: 'Arguments', required: false }]);
  });
});
