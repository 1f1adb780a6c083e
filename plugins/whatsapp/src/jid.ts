// WhatsApp addresses (JIDs): `<phone>@s.whatsapp.net` and `<lid>@lid` for people (optionally with
// `:<device>`), `<id>@g.us` for groups, `status@broadcast` for statuses, `<id>@newsletter` for channels.

import { isJidBroadcast, isJidGroup, isJidNewsletter, isLidUser, jidDecode } from './baileys.js';

/** What kind of chat a JID names, as far as the plugin cares. */
export type JidKind = 'phone' | 'lid' | 'group' | 'other';

/** Classifies a JID. Broadcasts, statuses and newsletters are `other` (the plugin ignores them). */
export function jidKind(jid: string | null | undefined): JidKind {
  if (!jid) return 'other';
  if (isJidBroadcast(jid) || isJidNewsletter(jid)) return 'other';
  if (isJidGroup(jid)) return 'group';
  if (isLidUser(jid)) return 'lid';
  const server = jidDecode(jid)?.server;
  return server === 's.whatsapp.net' || server === 'c.us' ? 'phone' : 'other';
}

/** The user part of a JID without device or agent (`15551234567:3@s.whatsapp.net` -> `15551234567`). */
export const jidUser = (jid: string): string =>
  jidDecode(jid)?.user ?? jid.split('@')[0]?.split(':')[0] ?? jid;

/** The phone JID for a number: `15551234567` -> `15551234567@s.whatsapp.net`. */
export const phoneJid = (phone: string): string => `${phone}@s.whatsapp.net`;

/** The device-less LID JID for a LID user part. */
export const lidJid = (lid: string): string => `${lid}@lid`;

/**
 * Normalises a phone number or JID as users write it in `allowFrom`:
 * `+1 (555) 123-4567` and `15551234567@s.whatsapp.net` -> `15551234567`; `123@lid` stays `123@lid`.
 * Returns `undefined` for something that is neither.
 */
export function normalizePeerEntry(entry: string): string | undefined {
  const trimmed = entry.trim();
  if (trimmed.includes('@')) {
    const kind = jidKind(trimmed);
    if (kind === 'phone') return jidUser(trimmed);
    if (kind === 'lid') return lidJid(jidUser(trimmed));
    return undefined;
  }
  const digits = trimmed.replace(/[\s()+.-]/g, '');
  return /^\d{5,20}$/.test(digits) ? digits : undefined;
}
