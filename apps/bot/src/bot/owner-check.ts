import type { InboundMessage } from '@colloquy/core';
import type { AppSection } from '../config/app-schema.js';

/**
 * Builds the owner check from `app.owners`: a sender is the owner of a channel when their id is
 * listed under that channel. Telegram entries may also be `@username`; WhatsApp entries may be phone
 * numbers in any spelling (`+1 555 123 4567`). A sender the plugin itself authenticated as the owner
 * (`sender.isOwner`, the web chat's admin login) is the owner too.
 *
 * @param owners - `app.owners`
 * @returns the check the runtime calls (`isOwner`)
 * @example
 * ```ts
 * const isOwner = createOwnerCheck({ telegram: ['123456789', '@alice'] });
 * isOwner(inbound); // true for Alice on Telegram
 * ```
 */
export function createOwnerCheck(owners: AppSection['owners']): (inbound: InboundMessage) => boolean {
  const lists = owners as Readonly<Record<string, readonly string[] | undefined>>;
  return (inbound) => {
    if (inbound.sender.isOwner === true) return true;
    const list = lists[inbound.channel];
    if (!list || list.length === 0) return false;
    const { id, username } = inbound.sender;
    return list.some((entry) => {
      const wanted = entry.trim();
      if (wanted === id) return true;
      if (wanted.startsWith('@') && username !== undefined) {
        return wanted.slice(1).toLowerCase() === username.replace(/^@/, '').toLowerCase();
      }
      if (inbound.channel === 'whatsapp') {
        const digits = wanted.replace(/\D/g, '');
        return digits.length >= 6 && digits === id.replace(/@.*$/, '').replace(/\D/g, '');
      }
      return false;
    });
  };
}
