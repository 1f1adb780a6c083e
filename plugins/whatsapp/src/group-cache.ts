import type { GroupMetadata } from '@whiskeysockets/baileys';
import { LRUCache } from 'lru-cache';

/**
 * Group metadata for Baileys' `cachedGroupMetadata`, so sending to a group does not query WhatsApp
 * every time. Filled from `groups.upsert` and from fetches; `groups.update` merges into a cached
 * entry; a participant change drops the entry (the next fetch brings the new list). In memory, the
 * `capacity` groups used most recently.
 */
export class GroupCache {
  private readonly groups: LRUCache<string, GroupMetadata>;

  constructor(capacity = 500) {
    this.groups = new LRUCache({ max: capacity });
  }

  get(jid: string): GroupMetadata | undefined {
    return this.groups.get(jid);
  }

  has(jid: string): boolean {
    return this.groups.has(jid);
  }

  /** Stores full metadata (a fetch or `groups.upsert`). */
  set(meta: GroupMetadata): void {
    if (meta.id) this.groups.set(meta.id, meta);
  }

  /** Applies a `groups.update` entry to a cached group; unknown groups are left to the next fetch. */
  update(change: Partial<GroupMetadata>): void {
    const current = change.id ? this.groups.get(change.id) : undefined;
    if (current) this.groups.set(current.id, { ...current, ...change, id: current.id });
  }

  /** Forgets a group (its participants changed). */
  invalidate(jid: string): void {
    this.groups.delete(jid);
  }
}
