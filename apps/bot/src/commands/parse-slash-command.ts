import type { ChannelCommand } from '@colloquy/core';

/** The slash commands every channel of the app answers, in help order. */
export const SLASH_COMMANDS: readonly (ChannelCommand & { usage: string })[] = [
  { name: 'help', usage: '/help', description: 'Show the commands' },
  { name: 'status', usage: '/status', description: 'Show this conversation: model, tokens, send policy' },
  { name: 'sessions', usage: '/sessions [kind ...]', description: 'List the sessions you can see' },
  { name: 'history', usage: '/history <key> [n]', description: 'Show the last messages of a session' },
  { name: 'search', usage: '/search <words>', description: 'Search the conversations you can see' },
  { name: 'send', usage: '/send <key> <message>', description: 'Send a message to another session' },
  { name: 'spawn', usage: '/spawn <task>', description: 'Start a sub-agent on a task' },
  {
    name: 'subagents',
    usage: '/subagents [list | steer <target> <message> | kill <target>]',
    description: 'List or control your sub-agents',
  },
  { name: 'tree', usage: '/tree', description: 'Show your sub-agents as a tree: status and durations' },
  { name: 'new', usage: '/new', description: 'Start a fresh conversation (the old one is archived)' },
];

/** Names accepted as another command's name. */
const ALIASES: Readonly<Record<string, string>> = { start: 'help', commands: 'help' };

/** A parsed slash command. */
export interface SlashCommand {
  /** The command name, lower-case, without `/` (aliases resolved, e.g. `/start` is `help`). */
  name: string;
  /** Everything after the name, trimmed (newlines kept). */
  rest: string;
  /** `rest` split on whitespace. */
  args: string[];
}

/**
 * Parses a message as one of the app's slash commands. Accepts Telegram's `/cmd@botname` form and
 * any case of the name. Messages that are not one of {@link SLASH_COMMANDS} give `undefined`, so
 * they go to the model like any message.
 *
 * @param text - the message text
 * @returns the command, or `undefined`
 * @example
 * ```ts
 * parseSlashCommand('/history@colloquy_bot main 5'); // { name: 'history', rest: 'main 5', args: ['main', '5'] }
 * ```
 */
export function parseSlashCommand(text: string): SlashCommand | undefined {
  const match = /^\/([A-Za-z_]{1,32})(?:@[A-Za-z0-9_]{1,64})?(?=\s|$)/.exec(text.trim());
  if (!match) return undefined;
  const word = match[1]!.toLowerCase();
  const name = ALIASES[word] ?? word;
  if (!SLASH_COMMANDS.some((c) => c.name === name)) return undefined;
  const rest = text.trim().slice(match[0].length).trim();
  return { name, rest, args: rest === '' ? [] : rest.split(/\s+/) };
}
