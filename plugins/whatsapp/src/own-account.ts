import type { Contact } from '@whiskeysockets/baileys';
import { jidUser } from './jid.js';
import type { MessageContent } from './message-content.js';

/** True when `jid` is the linked account itself, by phone number or LID (any device). */
export function isOwnJid(jid: string | null | undefined, me: Contact | undefined): boolean {
  if (!jid || !me) return false;
  const user = jidUser(jid);
  return user === jidUser(me.id) || (!!me.lid && user === jidUser(me.lid));
}

/**
 * True when a group message addresses the bot: an @mention of the linked account (by phone or
 * LID), a reply to one of its messages, a slash command, or `@<its number>` typed in the text.
 *
 * @param content - the message content
 * @param me - the linked account
 * @param sentByBot - whether a message id is one the bot sent
 */
export function addressesBot(
  content: MessageContent,
  me: Contact | undefined,
  sentByBot: (id: string) => boolean,
): boolean {
  if (content.mentionedJids.some((j) => isOwnJid(j, me))) return true;
  const quoted = content.quoted;
  if (quoted && (sentByBot(quoted.id) || isOwnJid(quoted.participant, me))) return true;
  if (content.text.trimStart().startsWith('/')) return true;
  if (!me) return false;
  const handles = [jidUser(me.id), me.lid ? jidUser(me.lid) : undefined];
  return handles.some((h) => h !== undefined && content.text.includes(`@${h}`));
}
