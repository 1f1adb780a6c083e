import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseSlashCommand, SLASH_COMMANDS } from './parse-slash-command.js';

describe('parseSlashCommand', () => {
  it('reads the name and the arguments of every advertised command', () => {
    for (const { name } of SLASH_COMMANDS) {
      expect(parseSlashCommand(`/${name} a b`)).toEqual({ name, rest: 'a b', args: ['a', 'b'] });
    }
  });

  it('has a row in the README table for every command /help lists', () => {
    const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
    for (const { usage } of SLASH_COMMANDS) expect(readme).toContain(`| \`${usage.replaceAll('|', '\\|')}\``);
  });

  it("accepts Telegram's /command@botname form and any case", () => {
    expect(parseSlashCommand('/History@colloquy_bot main 5')).toEqual({
      name: 'history',
      rest: 'main 5',
      args: ['main', '5'],
    });
  });

  it('keeps the message of /send whole, newlines included', () => {
    expect(parseSlashCommand('/send main hello\nworld')?.rest).toBe('main hello\nworld');
  });

  it('maps /start to /help', () => {
    expect(parseSlashCommand('/start')?.name).toBe('help');
  });

  it('lets unknown commands and ordinary text through to the model', () => {
    expect(parseSlashCommand('/shrug')).toBeUndefined();
    expect(parseSlashCommand('hello /help')).toBeUndefined();
    expect(parseSlashCommand('/helpme')).toBeUndefined();
    expect(parseSlashCommand('//help')).toBeUndefined();
  });
});
