import { describe, expect, it } from 'vitest';
import { checkAccess, requiresMention } from './access-policy.js';
import { resolveDiscordConfig } from './config.js';

const base = { accounts: [{ token: 't' }] };
const inGuild = { guildId: '10', channelId: '20', userId: '30' };
const inThread = { guildId: '10', channelId: '21', parentId: '20', userId: '30' };
const inDm = { channelId: '99', userId: '30' };

describe('checkAccess', () => {
  it('allows everyone when no allowlist is set', () => {
    const config = resolveDiscordConfig(base);
    expect(checkAccess(config, inGuild)).toEqual({ allowed: true });
    expect(checkAccess(config, inDm)).toEqual({ allowed: true });
  });

  it('drops guilds and channels outside the allowlists; a thread passes through its parent', () => {
    const config = resolveDiscordConfig({ ...base, allowGuilds: ['10'], allowChannels: ['20'] });
    expect(checkAccess(config, inGuild).allowed).toBe(true);
    expect(checkAccess(config, inThread).allowed).toBe(true);
    expect(checkAccess(config, { ...inGuild, guildId: '11' })).toMatchObject({
      allowed: false,
      reason: expect.stringMatching(/allowGuilds/),
    });
    expect(checkAccess(config, { ...inGuild, channelId: '22' })).toMatchObject({ allowed: false });
  });

  it('uses the most specific user allowlist: channel, then guild, then top level', () => {
    const config = resolveDiscordConfig({
      ...base,
      allowUsers: ['1'],
      guilds: { '10': { allowUsers: ['2'], channels: { '20': { allowUsers: ['3'] } } } },
    });
    expect(checkAccess(config, { ...inGuild, userId: '3' }).allowed).toBe(true);
    expect(checkAccess(config, { ...inGuild, userId: '2' }).allowed).toBe(false);
    expect(checkAccess(config, { ...inThread, userId: '3' }).allowed).toBe(true);
    expect(checkAccess(config, { ...inGuild, channelId: '25', userId: '2' }).allowed).toBe(true);
    expect(checkAccess(config, { ...inGuild, guildId: '11', userId: '1' }).allowed).toBe(true);
    expect(checkAccess(config, { ...inDm, userId: '1' }).allowed).toBe(true);
    expect(checkAccess(config, { ...inDm, userId: '2' }).allowed).toBe(false);
  });
});

describe('requiresMention', () => {
  it('never requires a mention in direct messages', () => {
    expect(requiresMention(resolveDiscordConfig(base), inDm)).toBe(false);
  });

  it('falls back from channel to parent channel to guild to the default', () => {
    const config = resolveDiscordConfig({
      ...base,
      requireMentionByDefault: true,
      guilds: { '10': { requireMention: false, channels: { '20': { requireMention: true }, '21': {} } } },
    });
    expect(requiresMention(config, inGuild)).toBe(true);
    expect(requiresMention(config, inThread)).toBe(true);
    expect(requiresMention(config, { ...inGuild, channelId: '25' })).toBe(false);
    expect(requiresMention(config, { ...inGuild, guildId: '11' })).toBe(true);
  });
});
