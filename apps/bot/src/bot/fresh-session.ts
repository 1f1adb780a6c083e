import { randomUUID } from 'node:crypto';
import type { Gateway, SessionRecord, StoredMessage } from '@colloquy/core';
import type { Store, StoreOperations } from '@colloquy/core/store';

/** What {@link startFreshSession} did. */
export type FreshSessionOutcome =
  | { status: 'archived'; archivedKey: string; messages: number }
  | { status: 'empty' }
  | { status: 'busy' };

const PAGE = 500;

/**
 * Starts a fresh conversation in a session (`/new`): the current transcript moves to an archived
 * session `<key>:archive:<time>` (hidden from lists, kept in the store), and the session starts over
 * with a new `sessionId`, keeping its chat, its settings (send policy, model, label) and its thread
 * bindings and unread inbox. Refused while a turn is queued or running.
 *
 * @param store - the app's store
 * @param gateway - the gateway (to check the session is idle)
 * @param session - the session to start over
 * @param now - epoch ms
 * @returns what was done
 */
export async function startFreshSession(
  store: Store,
  gateway: Gateway,
  session: SessionRecord,
  now: number,
): Promise<FreshSessionOutcome> {
  const status = await gateway.call('session.status', { key: session.key });
  if (status.activeRunId !== undefined || status.queueDepth > 0) return { status: 'busy' };
  return store.transaction(async (tx) => {
    const current = await tx.getSession(session.key);
    if (!current) return { status: 'empty' } as const;
    const count = await tx.countMessages(current.key);
    if (count === 0) return { status: 'empty' } as const;
    const transcript = await readAll(tx, current.key);
    const bindings = await tx.listThreadBindings({ sessionKey: current.key });
    const inbox = await tx.listInbox(current.key);
    const archivedKey = `${current.key}:archive:${new Date(now).toISOString().replace(/[-:.]/g, '')}`;
    const archived: SessionRecord = {
      ...current,
      key: archivedKey,
      sessionId: current.sessionId,
      kind: 'other',
      archivedAt: now,
      updatedAt: now,
      status: 'idle',
      displayName: `${current.displayName ?? current.key} (archived)`,
      meta: { ...current.meta, archivedFrom: current.key },
    };
    delete archived.label;
    delete archived.deliveryContext;
    await tx.deleteSession(current.key);
    await tx.putSession(archived);
    await tx.appendMessages(
      archivedKey,
      transcript.map(({ seq: _seq, ...message }) => message),
    );
    const fresh: SessionRecord = {
      key: current.key,
      sessionId: randomUUID(),
      agentId: current.agentId,
      kind: current.kind,
      createdAt: now,
      updatedAt: now,
      status: 'idle',
      spawnDepth: current.spawnDepth ?? 0,
    };
    for (const field of [
      'channel',
      'chatType',
      'label',
      'displayName',
      'deliveryContext',
      'lastChannel',
      'lastTo',
      'lastAccountId',
      'model',
      'thinkingLevel',
      'verboseLevel',
      'sendPolicy',
      'sandboxed',
      'spawnedBy',
      'requesterOrigin',
    ] as const) {
      if (current[field] !== undefined) (fresh as unknown as Record<string, unknown>)[field] = current[field];
    }
    await tx.putSession(fresh);
    for (const binding of bindings) await tx.putThreadBinding(binding);
    for (const entry of inbox) await tx.putInbox(entry);
    return { status: 'archived', archivedKey, messages: count } as const;
  });
}

async function readAll(store: StoreOperations, key: string): Promise<StoredMessage[]> {
  const pages: StoredMessage[][] = [];
  let beforeSeq: number | undefined;
  for (;;) {
    const page = await store.readTail(key, PAGE, beforeSeq === undefined ? undefined : { beforeSeq });
    if (page.length === 0) break;
    pages.unshift(page);
    if (page.length < PAGE) break;
    beforeSeq = page[0]!.seq;
  }
  return pages.flat();
}
