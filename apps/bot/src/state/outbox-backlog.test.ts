import { describe, expect, it } from 'vitest';
import { describeOutbox } from './outbox-backlog.js';

describe('describeOutbox', () => {
  it('says nothing when no reply waits', () => {
    expect(describeOutbox({ pending: 0, failingTargets: 0, byChannel: {} }, 0)).toBeUndefined();
  });

  it('counts the waiting replies by channel, with the oldest and the chats whose platform fails', () => {
    const now = 1_000_000;
    expect(
      describeOutbox(
        {
          pending: 12,
          failingTargets: 3,
          oldestSince: now - 41_200,
          byChannel: { telegram: 10, discord: 2 },
        },
        now,
      ),
    ).toBe(
      '12 replies not sent yet (telegram 10, discord 2), the oldest for 41.2s; 3 chats wait for their platform, which failed: they are sent again, in order, once it answers.',
    );
    expect(
      describeOutbox({ pending: 1, failingTargets: 0, oldestSince: now, byChannel: { slack: 1 } }, now),
    ).toBe('1 reply not sent yet (slack 1), the oldest for 0ms.');
  });
});
