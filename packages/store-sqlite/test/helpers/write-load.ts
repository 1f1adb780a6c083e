import { isColloquyError } from '@colloquy/core';
import { makeSessionRecord } from '@colloquy/testkit';
import { expect } from 'vitest';
import type { SqliteStore } from '../../src/sqlite-store.js';

/** What {@link writeUntilRefused} saw: the messages a flush reported durable, and the refusals. */
export interface LoadOutcome {
  /** Texts whose append was followed by a flush that resolved: the store acknowledged them. */
  acknowledged: string[];
  /** The disk-full errors that stopped the writers, one each. */
  refusals: unknown[];
}

/** True for the error a store gives when its disk is full. */
export function isDiskFull(error: unknown): boolean {
  return isColloquyError(error) && error.details.reason === 'disk-full';
}

/** The session each writer appends to. */
export const writerKey = (writer: number) => `agent:main:load-${writer}`;

/** Creates one session per writer. */
export async function createWriterSessions(store: SqliteStore, writers: number): Promise<void> {
  for (let w = 0; w < writers; w++) await store.putSession(makeSessionRecord(writerKey(w)));
}

/**
 * Appends messages of about `bytes` each from `writers` concurrent writers, each append followed by a
 * flush (as the runtime acknowledges a message), until every writer met a disk-full refusal. Any other
 * error fails the load.
 */
export async function writeUntilRefused(
  store: SqliteStore,
  options: {
    writers: number;
    bytes: number;
    tag: string;
    /** Called after each acknowledged write with how many there are so far. */
    onAcknowledged?: (count: number) => void;
  },
): Promise<LoadOutcome> {
  const outcome: LoadOutcome = { acknowledged: [], refusals: [] };
  const padding = 'x'.repeat(options.bytes);
  const writer = async (w: number) => {
    for (let n = 0; ; n++) {
      const text = `${options.tag}-${w}-${n} ${padding}`;
      try {
        await store.appendMessages(writerKey(w), [{ role: 'user', content: text, timestamp: n }]);
        await store.flush();
        outcome.acknowledged.push(text);
        options.onAcknowledged?.(outcome.acknowledged.length);
      } catch (error) {
        if (!isDiskFull(error)) throw error;
        outcome.refusals.push(error);
        return;
      }
    }
  };
  await Promise.all(Array.from({ length: options.writers }, (_, w) => writer(w)));
  return outcome;
}

/** Checks every acknowledged message is stored exactly once, and that the file is sound. */
export async function expectAcknowledgedKept(
  store: SqliteStore,
  writers: number,
  acknowledged: readonly string[],
): Promise<void> {
  const stored: string[] = [];
  for (let w = 0; w < writers; w++) {
    for (const m of await store.readTail(writerKey(w), 1_000_000)) stored.push(String(m.content));
  }
  const counts = new Map<string, number>();
  for (const text of stored) counts.set(text, (counts.get(text) ?? 0) + 1);
  expect(acknowledged.filter((text) => counts.get(text) !== 1)).toEqual([]);
  expect([...counts.values()].every((n) => n === 1)).toBe(true);
  expect(await store.integrityCheck()).toEqual({ ok: true, problems: [] });
}
