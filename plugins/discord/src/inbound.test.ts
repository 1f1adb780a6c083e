import { describe, expect, it } from 'vitest';
import { stripBotMention } from './inbound.js';

describe('stripBotMention', () => {
  it('removes the bot mention in both forms and keeps other mentions', () => {
    expect(stripBotMention('<@42> hello <@!42> <@7>', '42')).toBe('hello <@7>');
    expect(stripBotMention('hey <@420> there', '42')).toBe('hey <@420> there');
  });
});
