import type { InboundMessage } from '@colloquy/core';
import { describe, expect, it } from 'vitest';
import { createOwnerCheck } from './owner-check.js';

const from = (channel: string, id: string, username?: string): InboundMessage => ({
  channel,
  accountId: 'default',
  chat: { type: 'direct', id },
  sender: { id, ...(username ? { username } : {}) },
  text: '/send off',
  mentionsBot: true,
  messageId: 'm1',
});

describe('createOwnerCheck', () => {
  const isOwner = createOwnerCheck({
    telegram: ['111', '@Alice'],
    whatsapp: ['+1 555 123 4567'],
    webchat: ['v_owner'],
  });

  it('matches listed ids per channel only', () => {
    expect(isOwner(from('telegram', '111'))).toBe(true);
    expect(isOwner(from('discord', '111'))).toBe(false);
    expect(isOwner(from('webchat', 'v_owner'))).toBe(true);
    expect(isOwner(from('webchat', 'v_guest'))).toBe(false);
  });

  it('trusts a sender the plugin authenticated as the owner (web chat admin)', () => {
    const admin = from('webchat', 'v_someone');
    expect(isOwner(admin)).toBe(false);
    expect(isOwner({ ...admin, sender: { ...admin.sender, isOwner: true } })).toBe(true);
  });

  it('matches Telegram @usernames in any case', () => {
    expect(isOwner(from('telegram', '999', 'alice'))).toBe(true);
    expect(isOwner(from('telegram', '999', 'mallory'))).toBe(false);
  });

  it('matches WhatsApp phone numbers in any spelling', () => {
    expect(isOwner(from('whatsapp', '15551234567'))).toBe(true);
    expect(isOwner(from('whatsapp', '15551234567@s.whatsapp.net'))).toBe(true);
    expect(isOwner(from('whatsapp', '15559999999'))).toBe(false);
  });

  it('has no owners when none are configured', () => {
    expect(createOwnerCheck({})(from('telegram', '111'))).toBe(false);
  });
});
