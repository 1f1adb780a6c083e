import { join } from 'node:path';
import type { Logger } from '@colloquy/core';
import type { Contact, WAMessageKey } from '@whiskeysockets/baileys';
import { nodeStateFs, type StateFs } from './atomic-file.js';
import { jidKind, jidUser, lidJid, normalizePeerEntry, phoneJid } from './jid.js';
import { JsonStateFile } from './state-file.js';

const FILE = 'lid-map.json';

/**
 * Pairs of key fields that name one person twice (LID and phone). Baileys 7 sets `remoteJidAlt`
 * and `participantAlt`; the older spellings are still read from stored messages.
 */
const ALT_KEY_PAIRS: readonly (readonly [string, string])[] = [
  ['remoteJid', 'remoteJidAlt'],
  ['participant', 'participantAlt'],
  ['senderLid', 'senderPn'],
  ['participantLid', 'participantPn'],
];

interface PeerMapFile {
  version: 1;
  /** LID user part -> phone number. */
  lidToPhone: Record<string, string>;
}

/**
 * One person can reach the bot as `<phone>@s.whatsapp.net` or as `<lid>@lid` (WhatsApp's privacy
 * ids). The peer map learns which LID belongs to which phone number and gives every person one
 * stable peer id: the phone number when known, else the LID JID. It is persisted in the state dir.
 */
export class PeerMap {
  private readonly lidToPhone = new Map<string, string>();
  /** Peer id -> the JID the person last wrote from (replies go back there). */
  private readonly lastJid = new Map<string, string>();

  private constructor(private readonly file: JsonStateFile) {}

  /** Loads the map from `<stateDir>/lid-map.json`; a corrupt file is reported and ignored. */
  static async load(stateDir: string, log: Logger, fs: StateFs = nodeStateFs): Promise<PeerMap> {
    const map = new PeerMap(
      new JsonStateFile(join(stateDir, FILE), fs, log, {
        corrupt: 'WhatsApp LID map is corrupt; starting empty (it is rebuilt from incoming messages)',
        saveFailed: 'could not save the WhatsApp LID map',
      }),
    );
    const parsed = (await map.file.read()) as Partial<PeerMapFile> | undefined;
    for (const [lid, phone] of Object.entries(parsed?.lidToPhone ?? {})) map.lidToPhone.set(lid, phone);
    return map;
  }

  /** Records that `lid` and `phone` (JIDs or bare ids) are the same person. Returns true if new. */
  learn(lid: string | null | undefined, phone: string | null | undefined): boolean {
    if (!lid || !phone) return false;
    const lidUser = lid.includes('@') ? (jidKind(lid) === 'lid' ? jidUser(lid) : undefined) : lid;
    const phoneUser = phone.includes('@') ? (jidKind(phone) === 'phone' ? jidUser(phone) : undefined) : phone;
    if (!lidUser || !phoneUser || !/^\d+$/.test(phoneUser)) return false;
    if (this.lidToPhone.get(lidUser) === phoneUser) return false;
    this.lidToPhone.set(lidUser, phoneUser);
    this.scheduleSave();
    return true;
  }

  /** Adds a contacts map: LID (JID or bare) -> phone number or phone JID. */
  learnAll(contacts: Record<string, string>): void {
    for (const [lid, phone] of Object.entries(contacts)) {
      this.learn(lid.includes('@') ? lid : lidJid(lid), normalizePeerEntry(phone));
    }
  }

  /** Learns from the alternate JIDs Baileys 7 puts on message keys (`remoteJidAlt`, `participantAlt`). */
  learnFromKey(key: WAMessageKey): void {
    const fields = key as Record<string, unknown>;
    for (const [a, b] of ALT_KEY_PAIRS) {
      const x = fields[a];
      const y = fields[b];
      if (typeof x !== 'string' || typeof y !== 'string') continue;
      if (jidKind(x) === 'lid') this.learn(x, y);
      else if (jidKind(y) === 'lid') this.learn(y, x);
    }
  }

  /** Learns from contact events (`id`, `lid` and Baileys 7's `phoneNumber`). */
  learnFromContacts(contacts: readonly Partial<Contact>[]): void {
    for (const contact of contacts) {
      const ids = [contact.id, contact.lid, contact.phoneNumber].filter(
        (j): j is string => typeof j === 'string',
      );
      const lid = ids.find((j) => jidKind(j) === 'lid');
      const phone = ids.find((j) => jidKind(j) === 'phone');
      if (lid && phone) this.learn(lid, phone);
    }
  }

  /** The phone number of a LID, when known. */
  phoneForLid(lid: string): string | undefined {
    return this.lidToPhone.get(jidUser(lid));
  }

  /**
   * The stable peer id of a person's JID: the phone number (`15551234567`) when known, else the
   * LID JID (`123456@lid`). `undefined` for JIDs that are not people.
   */
  peerIdFor(jid: string): string | undefined {
    const kind = jidKind(jid);
    if (kind === 'phone') return jidUser(jid);
    if (kind === 'lid') return this.phoneForLid(jid) ?? lidJid(jidUser(jid));
    return undefined;
  }

  /** Remembers the JID a peer last wrote from. */
  rememberJid(peerId: string, jid: string): void {
    this.lastJid.set(peerId, jid);
  }

  /** The JID to send to for a delivery target: a group JID, a peer id or any JID. */
  jidFor(to: string): string {
    const remembered = this.lastJid.get(to);
    if (remembered) return remembered;
    if (to.includes('@')) return to;
    return phoneJid(to.replace(/^\+/, ''));
  }

  /** Every JID that addresses the same person as `jid` (itself, and its phone or LID twin). */
  aliasesOf(jid: string): string[] {
    const out = new Set<string>([jid]);
    const kind = jidKind(jid);
    if (kind === 'lid') {
      const phone = this.phoneForLid(jid);
      if (phone) out.add(phoneJid(phone));
    } else if (kind === 'phone') {
      const user = jidUser(jid);
      for (const [lid, phone] of this.lidToPhone) if (phone === user) out.add(lidJid(lid));
    }
    return [...out];
  }

  /** Resolves once pending writes are on disk. */
  async flush(): Promise<void> {
    await this.file.flush();
  }

  private scheduleSave(): void {
    this.file.scheduleSave(
      (): PeerMapFile => ({ version: 1, lidToPhone: Object.fromEntries(this.lidToPhone) }),
    );
  }
}
