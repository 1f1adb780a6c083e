import type { OutboxStats } from '@colloquy/runtime';
import { duration } from '../format/units.js';

/**
 * The sentence `colloquy status` and `/status` show for replies waiting in the delivery outbox,
 * or `undefined` when none waits.
 *
 * @param outbox - the runtime's `outbox()` figures
 * @param now - epoch ms
 * @returns e.g. `12 replies not sent yet (telegram 12), the oldest for 41.2s; 3 chats wait for
 *   their platform, which failed: they are sent again, in order, once it answers.`
 */
export function describeOutbox(outbox: OutboxStats, now: number): string | undefined {
  if (outbox.pending === 0) return undefined;
  const channels = Object.entries(outbox.byChannel)
    .map(([channel, count]) => `${channel} ${count}`)
    .join(', ');
  const oldest =
    outbox.oldestSince === undefined ? '' : `, the oldest for ${duration(now - outbox.oldestSince)}`;
  const failing =
    outbox.failingTargets === 0
      ? ''
      : `; ${outbox.failingTargets} ${outbox.failingTargets === 1 ? 'chat waits' : 'chats wait'} for their platform, which failed: they are sent again, in order, once it answers`;
  return `${outbox.pending} ${outbox.pending === 1 ? 'reply' : 'replies'} not sent yet (${channels})${oldest}${failing}.`;
}
