import type { ChannelCommand, InboundMessage, Logger } from '@colloquy/core';
import { discord, renderMessages } from '@colloquy/markdown';
import {
  ApplicationCommandOptionType,
  ApplicationCommandType,
  type ChatInputCommandInteraction,
  MessageFlags,
  type REST,
  type RESTPutAPIApplicationGuildCommandsJSONBody,
  Routes,
} from 'discord.js';

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
  runCommand: (message: InboundMessage) => Promise<string>;
  log: Logger;
}

/**
 * Answers a slash command within Discord's 3-second window: defers at once, runs the command
 * through the app's `runCommand`, then edits the deferred reply (and follows up past 2000 characters).
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
  try {
    reply = await input.runCommand(input.inbound);
  } catch (error) {
    input.log.warn({ err: error, command: interaction.commandName }, 'slash command failed');
    reply = `The command failed: ${error instanceof Error ? error.message : String(error)}`;
  }
  await replyToInteraction(interaction, reply);
}

/**
 * Writes text into a deferred interaction reply: the first chunk edits it, the rest follow up.
 * Blank text deletes the deferred reply.
 *
 * @returns the ids of the messages holding the text
 */
export async function replyToInteraction(
  interaction: ChatInputCommandInteraction,
  text: string,
): Promise<string[]> {
  const chunks = renderMessages(text, discord);
  if (chunks.length === 0) {
    // Nothing may be said here (send policy): remove the "thinking…" placeholder instead.
    await interaction.deleteReply();
    return [];
  }
  const [first = '', ...rest] = chunks;
  const ids = [(await interaction.editReply({ content: first, allowedMentions: { parse: [] } })).id];
  for (const content of rest) {
    ids.push((await interaction.followUp({ content, allowedMentions: { parse: [] } })).id);
  }
  return ids;
}

/**
 * Deferred slash commands waiting for their answer from the runtime. Without `ctx.runCommand` the
 * command goes to `ctx.receive` like a message; the runtime answers it with a send that replies to
 * the interaction id, which this table turns into the interaction's reply. An answer that does not
 * come in time (the command became a model run) closes the interaction with a note instead.
 */
export class PendingInteractions {
  private readonly pending = new Map<
    string,
    { interaction: ChatInputCommandInteraction; timer: NodeJS.Timeout }
  >();

  constructor(
    private readonly timeoutMs: number,
    private readonly log: Logger,
  ) {}

  /** Defers the interaction and waits for its answer. */
  async defer(interaction: ChatInputCommandInteraction): Promise<void> {
    await interaction.deferReply();
    const timer = setTimeout(() => {
      if (!this.pending.delete(interaction.id)) return;
      interaction
        .editReply({ content: 'Passed on to the conversation: the answer follows in the chat.' })
        .catch((error: unknown) => this.log.debug({ err: error }, 'could not close a deferred command'));
    }, this.timeoutMs);
    timer.unref();
    this.pending.set(interaction.id, { interaction, timer });
  }

  /** Answers a pending interaction when `replyTo` names one; resolves `undefined` otherwise. */
  async answer(replyTo: string | undefined, text: string): Promise<string[] | undefined> {
    const entry = replyTo === undefined ? undefined : this.pending.get(replyTo);
    if (entry === undefined || replyTo === undefined) return undefined;
    this.pending.delete(replyTo);
    clearTimeout(entry.timer);
    return replyToInteraction(entry.interaction, text);
  }

  /** Forgets every pending interaction (at stop). */
  clear(): void {
    for (const { timer } of this.pending.values()) clearTimeout(timer);
    this.pending.clear();
  }
}

/** Refuses a command from someone outside the allowlists, visibly only to them. */
export async function refuseCommand(interaction: ChatInputCommandInteraction): Promise<void> {
  await interaction.reply({
    content: 'You are not allowed to use this bot here.',
    flags: MessageFlags.Ephemeral,
  });
}
