import type { RunRecord } from '@colloquy/core/gateway';
import type { Store } from '@colloquy/core/store';
import { afterEach, describe, expect, it } from 'vitest';
import { type Harness, STORE_KINDS, waitFor } from './support/harness.js';
import { startRecordingHarness, tallyCalls } from './support/recording-store.js';

const DM = 'agent:main:memory:dm:user-1';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

/** The delivery a run's reply got, as stored (read past the recorder, so it counts nothing). */
function deliveryStatusOf(run: RunRecord | undefined): string | undefined {
  return (run?.meta?.delivery as { status?: string } | undefined)?.status;
}

/** Sends one DM and waits until its reply was sent, its delivery recorded and the queue is idle. */
async function dmTurn(harness: Harness, inner: Store, text: string): Promise<void> {
  const sent = harness.channel.sent.length;
  await harness.channel.inject({ text, sender: { id: 'user-1', name: 'Ada' }, messageId: text });
  await harness.channel.waitForSent(sent + 1);
  await waitFor(async () => {
    const runs = await inner.listRuns({ sessionKey: DM, limit: 1 });
    return deliveryStatusOf(runs[0]) === 'delivered';
  });
  await waitFor(() => {
    const stats = harness.runtime.stats();
    return stats.pending === 0 && stats.lanes.main.running === 0;
  });
  // Work the turn left in the background (watch notices) settles within a few ticks.
  for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
}

describe.each(STORE_KINDS)('the store work of a turn (%s)', (kind) => {
  it('a plain DM turn makes at most 3 store operations and at most 2 commits before its reply is sent', async () => {
    const { harness, recorder, inner } = await startRecordingHarness(kind, {
      script: ['first answer', 'second answer'],
      // The announce poll and the sub-agent sweep run on timers of their own, not in a turn: on a
      // slow machine a poll could land inside the counted turn.
      subagents: { pollMs: 3_600_000, sweepMs: 3_600_000 },
    });
    h = harness;
    // The first message creates the session and fills the history cache; the second is the
    // turn a conversation repeats.
    await dmTurn(h, inner, 'hello');
    // The commits made before the reply went out: those the user waits for.
    let commitsBeforeSend: number | undefined;
    const send = h.channel.send.bind(h.channel);
    h.channel.send = (to, message) => {
      commitsBeforeSend ??= recorder.recording().commits;
      return send(to, message);
    };
    recorder.reset();
    await dmTurn(h, inner, 'and again');
    const recording = recorder.recording();
    const counts = JSON.stringify(tallyCalls(recording));
    expect(recording.calls.length, `store operations of the turn: ${counts}`).toBeLessThanOrEqual(3);
    expect(commitsBeforeSend, `commits before the reply was sent; operations: ${counts}`).toBeLessThanOrEqual(
      2,
    );
    // The outcome of the send is recorded after it, in a commit of its own (shared under load).
    expect(recording.commits, `commits of the turn; operations: ${counts}`).toBeLessThanOrEqual(3);
  });

  it('begins the turn of a message that comes while the last reply is being sent in the commit that stores it, replies in order', async () => {
    const { harness, recorder, inner } = await startRecordingHarness(kind, {
      script: ['first answer', 'second answer', 'third answer'],
      subagents: { pollMs: 3_600_000, sweepMs: 3_600_000 },
    });
    h = harness;
    await dmTurn(h, inner, 'first');
    const sender = { id: 'user-1', name: 'Ada' };
    // The second reply's send waits until released: its turn has stored its end by then.
    let release!: () => void;
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    let sendHeld!: () => void;
    const sendStarted = new Promise<void>((resolve) => {
      sendHeld = resolve;
    });
    const send = h.channel.send.bind(h.channel);
    let hold = true;
    h.channel.send = async (to, message) => {
      if (hold) {
        hold = false;
        sendHeld();
        await released;
      }
      return send(to, message);
    };
    const sent = h.channel.sent.length;
    await h.channel.inject({ text: 'second', sender, messageId: 'second' });
    await sendStarted;
    recorder.reset();
    await h.channel.inject({ text: 'third', sender, messageId: 'third' });
    // Stored as begun: running already, its input in the transcript, and no other store call.
    const [third] = await inner.listRuns({ sessionKey: DM, limit: 1 });
    expect(third).toMatchObject({ message: 'third', status: 'running' });
    expect(tallyCalls(recorder.recording())).toEqual({ commitInbound: 1 });
    release();
    await h.channel.waitForSent(sent + 2);
    expect(h.channel.sent.slice(sent).map((message) => message.text)).toEqual([
      'second answer',
      'third answer',
    ]);
    await waitFor(
      async () => deliveryStatusOf((await inner.listRuns({ sessionKey: DM, limit: 1 }))[0]) === 'delivered',
    );
    const tail = await inner.readTail(DM, 4);
    expect(tail.map((message) => message.content)).toEqual([
      'second',
      'second answer',
      'third',
      'third answer',
    ]);
  });
});
