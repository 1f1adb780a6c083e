import type { RunRecord } from '@colloquy/core/gateway';
import type { PostgresStore } from '@colloquy/store-postgres';

/** Runs whose input came from a chat (not sub-agent tasks or announces). */
export const inboundRuns = (runs: readonly RunRecord[]): RunRecord[] =>
  runs.filter((run) => run.meta?.input !== undefined);

/**
 * Reads the runs until `inbound` chat messages are stored, no run is queued or running, no reply is
 * planned and unsent, and no announce is pending; throws saying what was left after `timeoutMs`. A
 * run is done once its end is committed; the reply it planned is sent after that, so the last
 * turns' replies may still be on their way (or waiting for a killed instance's job to retry).
 *
 * @returns every run, once settled
 */
export async function settledRuns(
  store: PostgresStore,
  inbound: number,
  timeoutMs = 120_000,
): Promise<RunRecord[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const runs = await store.listRuns({ limit: 100_000 });
    const stored = inboundRuns(runs).length;
    const active = runs.filter((run) => run.status === 'queued' || run.status === 'running');
    const pending = (await store.listOutbox({ statuses: ['pending'] })).length;
    const sending = runs.filter((run) => {
      const delivery = run.meta?.delivery as { status?: string } | undefined;
      return run.meta?.pendingDelivery !== undefined && (!delivery || delivery.status === 'sending');
    });
    if (stored >= inbound && active.length === 0 && pending === 0 && sending.length === 0) return runs;
    if (Date.now() > deadline) {
      const left = [...active, ...sending]
        .slice(0, 10)
        .map(
          (run) =>
            `${run.sessionKey} ${run.status} (attempts ${run.attempts}, delivery ${JSON.stringify(run.meta?.delivery)})`,
        );
      throw new Error(
        `not settled: ${stored}/${inbound} inbound runs, ${active.length} active, ${pending} announces pending, ${sending.length} replies planned and not sent; first of them: ${left.join('; ')}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}
