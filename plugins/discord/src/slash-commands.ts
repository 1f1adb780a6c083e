import type { ChannelCommand, InboundMessage, Logger } from '@colloquy/core';
import {
  ApplicationCommandOptionType,
  ApplicationCommandType,
  type ChatInputCommandInteraction,
  MessageFlags,
  type REST,
  type RESTPutAPIApplicationGuildCommandsJSONBody,
  Routes,
} from 'discord.js';
import { chunkDiscordMarkdown } from './chunk-markdown.js';

/** The commands registered when the app announces none. */
export const DEFAULT_COMMANDS: readonly ChannelCommand[] = [
  { name: 'status', description: 'Show the status of this conversation' },
  { name: 'sessions', description: 'List sessions' },
  { name: 'subagents', description: 'List or control sub-agents' },
];

/** The free-text option every registered command takes. */
export const ARGS_OPTION = 'args';

/**
 * Turns the app's commands into Discord's guild command payload: names lower-cased and cut to
 * Discord's rules, descriptions to 1-100 characters, each with an optional `args` string.
 *
 * @param commands - the app's commands (`ctx.commands`); empty means {@link DEFAULT_COMMANDS}
 */
export function toCommandPayload(
  commands: readonly ChannelCommand[],
): RESTPutAPIApplicationGuildCommandsJSONBody {
  const source = commands.length > 0 ? commands : DEFAULT_COMMANDS;
  const seen = new Set<string>();
  const payload: RESTPutAPIApplicationGuildCommandsJSONBody = [];
  for (const command of source) {
    const name = command.name
      .replace(/^\//, '')
      .toLowerCase()
      .replace(/[^-_\p{L}\p{N}]/gu, '-')
      .slice(0, 32);
    if (name === '' || seen.has(name)) continue;
    seen.add(name);
    const description = (command.description.trim() || name).slice(0, 100);
    payload.push({
      type: ApplicationCommandType.ChatInput,
      name,
      description,
      options: [
        {
          type: ApplicationCommandOptionType.String,
          name: ARGS_OPTION,
          description: 'Arguments',
          required: false,
        },
      ],
    });
  }
  return payload.slice(0, 100);
}

/**
 * Registers the commands in one guild (a bulk overwrite, so removed commands disappear).
 *
 * @param rest - the account's REST client
 * @param applicationId - the bot's application id
 * @param guildId - the guild
 * @param commands - the payload from {@link toCommandPayload}
 */
export async function registerGuildCommands(
  rest: REST,
  applicationId: string,
  guildId: string,
  commands: RESTPutAPIApplicationGuildCommandsJSONBody,
): Promise<void> {
  await rest.put(Routes.applicationGuildCommands(applicationId, guildId), { body: commands });
}

/** What {@link answerCommand} needs besides the interaction. */
export interface AnswerCommandInput {
  inbound: InboundMessage;
  runCommand: ((message: InboundMessage) => Promise<string>) | undefined;
  log: Logger;
}

/**
 * Answers a slash command within Discord's 3-second window: defers at once, runs the command
 * through the app, then edits the deferred reply (and follows up for text past 2000 characters).
 *
 * @param interaction - the chat input command
 * @param input - the normalised command and the app's runner
 */
export async function answerCommand(
  interaction: ChatInputCommandInteraction,
  input: AnswerCommandInput,
): Promise<void> {
  await interaction.deferReply();
  let reply: string;
  if (input.runCommand === undefined) {
    reply = 'This bot does not run slash commands here.';
  } else {
    try {
      reply = await input.runCommand(input.inbound);
    } catch (error) {
      input.log.warn({ err: error, command: interaction.commandName }, 'slash command failed');
      reply = `The command failed: ${error instanceof Error ? error.message : String(error)}`;
    }
  }
  const [first = 'Done.', ...rest] = chunkDiscordMarkdown(reply);
  await interaction.editReply({ content: first, allowedMentions: { parse: [] } });
  for (const content of rest) await interaction.followUp({ content, allowedMentions: { parse: [] } });
}

/** Refuses a command from someone outside the allowlists, visibly only to them. */
export async function refuseCommand(interaction: ChatInputCommandInteraction): Promise<void> {
  await interaction.reply({
    content: 'You are not allowed to use this bot here.',
    flags: MessageFlags.Ephemeral,
  });
}
