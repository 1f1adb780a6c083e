import type { PairingAccess } from '@colloquy/core';
import type { TelegramConfig } from '../config.js';

/** How often a waiting user is reminded of their code at most. */
export const PAIRING_REMINDER_MS = 10 * 60 * 1000;

/** What to do with a direct message. */
export type DmDecision =
  | { action: 'accept' }
  | { action: 'drop'; reason: string }
  /** Pairing: tell the user `code` when `notify` (new code, or the reminder interval passed). */
  | { action: 'pair'; code: string; notify: boolean };

/** The DM sender. */
export interface DmSender {
  id: string;
  username?: string;
  name?: string;
}

/**
 * True when `allowFrom` lists the sender by id or by @username (case-insensitive).
 *
 * @param allowFrom - ids or usernames, with or without `@`
 * @param sender - the sender
 */
export function isAllowListed(allowFrom: readonly string[], sender: DmSender): boolean {
  const username = sender.username?.toLowerCase();
  return allowFrom.some((entry) => {
    if (/^-?[0-9]+$/.test(entry)) return entry === sender.id;
    return username !== undefined && entry.replace(/^@/, '').toLowerCase() === username;
  });
}

/**
 * Applies `dmPolicy` to a direct message: `open` accepts, `allowlist` accepts only `allowFrom`,
 * `pairing` accepts `allowFrom` and approved users and issues (or recalls) a one-time code for
 * anyone else. Pairing state lives in the Store (`ChannelContext.pairing`), per account.
 *
 * @param config - the resolved Telegram config
 * @param pairing - the channel's pairing state
 * @param accountId - the receiving account (approvals are per account)
 * @param sender - the sender
 * @param now - the clock (epoch ms)
 */
export async function decideDmAccess(
  config: Pick<TelegramConfig, 'dmPolicy' | 'allowFrom'>,
  pairing: PairingAccess,
  accountId: string,
  sender: DmSender,
  now: number = Date.now(),
): Promise<DmDecision> {
  if (config.dmPolicy === 'open' || isAllowListed(config.allowFrom, sender)) return { action: 'accept' };
  if (config.dmPolicy === 'allowlist') {
    return { action: 'drop', reason: 'sender not in channels.telegram.allowFrom (dmPolicy "allowlist")' };
  }
  if (await pairing.isApproved(accountId, sender.id)) return { action: 'accept' };
  const { record, created } = await pairing.request(
    {
      accountId,
      peerId: sender.id,
      ...(sender.name !== undefined ? { displayName: sender.name } : {}),
      ...(sender.username !== undefined ? { meta: { username: sender.username } } : {}),
    },
    now,
  );
  if (record.status === 'approved' || record.code === undefined) return { action: 'accept' };
  const notify = created || now - (record.notifiedAt ?? record.createdAt) >= PAIRING_REMINDER_MS;
  if (notify) await pairing.markNotified(accountId, sender.id, now);
  return { action: 'pair', code: record.code, notify };
}

/**
 * Whether a group or channel message must address the bot to be answered.
 *
 * @param config - the resolved Telegram config
 * @param chatId - the chat id
 */
export function requiresMention(
  config: Pick<TelegramConfig, 'groups' | 'requireMentionByDefault'>,
  chatId: string,
): boolean {
  return config.groups[chatId]?.requireMention ?? config.requireMentionByDefault;
}

/**
 * Whether a group or channel is served at all (`groupPolicy: "allowlist"` serves only chats listed
 * in `groups`).
 */
export function isGroupAllowed(
  config: Pick<TelegramConfig, 'groups' | 'groupPolicy'>,
  chatId: string,
): boolean {
  return config.groupPolicy === 'open' || Object.hasOwn(config.groups, chatId);
}
