import { describe, expect, it } from 'vitest';
import { mentionsAssistant, normalizeRoomName } from './addressing.js';

describe('room addressing', () => {
  it('counts @bot, @<name> and slash commands as addressing the assistant', () => {
    expect(mentionsAssistant('hey @bot what is up', 'Assistant')).toBe(true);
    expect(mentionsAssistant('@BOT', 'Assistant')).toBe(true);
    expect(mentionsAssistant('ping @ada.', 'Ada')).toBe(true);
    expect(mentionsAssistant('ask @HelpDesk please', 'Help Desk')).toBe(true);
    expect(mentionsAssistant('  /status', 'Assistant')).toBe(true);
  });

  it('ignores plain chatter, e-mail addresses and other handles', () => {
    expect(mentionsAssistant('the bot said hi', 'Assistant')).toBe(false);
    expect(mentionsAssistant('mail me at me@bot.example', 'Assistant')).toBe(false);
    expect(mentionsAssistant('@botany is fun', 'Assistant')).toBe(false);
    expect(mentionsAssistant('@alice look', 'Assistant')).toBe(false);
    expect(mentionsAssistant('a/b testing', 'Assistant')).toBe(false);
  });

  it('normalises room names and refuses unsafe ones', () => {
    expect(normalizeRoomName(' Lobby ')).toBe('lobby');
    expect(normalizeRoomName('team-42')).toBe('team-42');
    for (const bad of ['', '-x', 'a_b', 'v_abc', 'a b', '<script>', 'x'.repeat(49), '../etc']) {
      expect(normalizeRoomName(bad)).toBeUndefined();
    }
  });
});
