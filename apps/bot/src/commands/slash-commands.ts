import type { AgentTool, ChannelCommand, Gateway, InboundMessage, SessionRecord } from '@colloquy/core';
import { isColloquyError } from '@colloquy/core';
import type {
  SessionStatusToolResult,
  SessionsHistoryResult,
  SessionsListToolResult,
  SessionsSearchToolResult,
  SessionsSendResult,
  SessionsSpawnResult,
  SubagentsResult,
} from '@colloquy/core/gateway';
import { parseSendCommand } from '@colloquy/core/internal';
import type { CommandsHook } from '@colloquy/runtime';
import { renderSpawnTreeForChat } from '../format/spawn-tree-text.js';
import { parseSlashCommand, SLASH_COMMANDS, type SlashCommand } from './parse-slash-command.js';
import {
  isToolProblem,
  NO_SUBAGENTS,
  renderHistory,
  renderProblem,
  renderSearch,
  renderSendResult,
  renderSessionList,
  renderSessionStatus,
  renderSpawn,
  renderSubagents,
} from './render-results.js';

/** Options of {@link createSlashCommands}. */
export interface SlashCommandsOptions {
  /** The gateway the tools call (a function: the runtime is created after the hook). */
  gateway: () => Gateway;
  /**
   * The tools of a session: the same function the runtime's tools hook uses, so commands run exactly
   * what the model runs, with the same visibility and policy.
   */
  toolsFor: (session: SessionRecord, track: (work: Promise<void>) => void) => readonly AgentTool[];
  /** True when the sender is the owner (allowed `/send on|off|inherit`). */
  isOwner: (inbound: InboundMessage) => boolean;
  /** Starts a fresh conversation for `/new` and returns the reply. Absent: `/new` says it is unavailable. */
  newSession?: (session: SessionRecord) => Promise<string>;
  /** Extra lines for `/status` (channels, model hints). */
  statusLines?: (inbound: InboundMessage, session: SessionRecord) => string[];
  /**
   * The reply to a plain message when the session has no usable model (then the model is not run),
   * or `undefined` when it has one.
   */
  modelMissing?: (session: SessionRecord) => string | undefined;
  /** Receives background work (the reply of `/send`), so shutdown can wait for it. */
  track: (work: Promise<void>) => void;
  /** How long `/send` waits in the background for the reply it posts back. Default 300000 ms. */
  sendReplyWaitMs?: number;
  /** The clock. Default `Date.now`. */
  now?: () => number;
  /**
   * The most characters one message may have on a channel (its `capabilities.maxTextLength`): `/tree`
   * cuts its tree to fit one message. Default: no limit.
   */
  maxTextLength?: (channel: string) => number | undefined;
}

/** The app's slash commands: the runtime hook and the list advertised to platforms. */
export interface SlashCommands {
  /** The runtime's `commands` hook: answers slash commands (and plain messages when no model is set). */
  readonly hook: CommandsHook;
  /** The commands for `ChannelContext.commands` (Telegram's menu, Discord's slash commands). */
  readonly commandList: readonly ChannelCommand[];
  /** Runs one parsed command for a session and returns the reply. */
  run(command: SlashCommand, inbound: InboundMessage, session: SessionRecord): Promise<string>;
}

/**
 * Creates the slash commands every channel answers: `/help`, `/status`, `/sessions`,
 * `/history <key> [n]`, `/send <key> <message>`, `/spawn <task>`, `/subagents [list|steer|kill ...]`,
 * `/tree` (the sub-agents as a tree: the `subagents` list, so the same rows and visibility) and `/new`. Each command calls the session tools of the sender's own session, so it sees and may
 * do exactly what the model of that session may. `/send on|off|inherit` from the owner is handled by
 * the runtime before this hook; from anyone else it is refused here.
 *
 * @param options - gateway, the tools of a session, owner check, `/new`, status lines, model check
 * @returns the hook and the command list
 * @example
 * ```ts
 * const commands = createSlashCommands({ gateway: () => runtime.gateway, toolsFor, isOwner, track });
 * const runtime = createRuntime({ config, store, commands: commands.hook, commandList: commands.commandList });
 * ```
 */
export function createSlashCommands(options: SlashCommandsOptions): SlashCommands {
  const now = options.now ?? Date.now;
  const waitMs = options.sendReplyWaitMs ?? 300_000;

  const callTool = async (session: SessionRecord, name: string, args: unknown): Promise<unknown> => {
    const tool = options.toolsFor(session, options.track).find((t) => t.name === name);
    if (!tool) return undefined;
    const result = await tool.execute(`slash-${name}-${now().toString(36)}`, args as never);
    return result.details;
  };

  const postReplyLater = (session: SessionRecord, runId: string, target: string): void => {
    const work = (async () => {
      const gateway = options.gateway();
      const waited = await gateway.call('agent.wait', { runId, timeoutMs: waitMs });
      if (waited.waitTimedOut) return;
      const text =
        waited.status === 'done'
          ? `Reply from ${target}:\n${waited.reply?.trim() || '(no text)'}`
          : `The message to ${target} ended with status ${waited.status}${waited.error ? `: ${waited.error}` : ''}.`;
      await gateway.call('chat.send', { key: session.key, text });
    })().catch(() => undefined);
    options.track(work);
  };

  async function run(
    command: SlashCommand,
    inbound: InboundMessage,
    session: SessionRecord,
  ): Promise<string> {
    switch (command.name) {
      case 'help':
        return helpText();
      case 'status': {
        const details = await callTool(session, 'session_status', {});
        const lines = isToolProblem(details)
          ? [renderProblem(details)]
          : details
            ? renderSessionStatus(details as SessionStatusToolResult)
            : [];
        if (inbound.chat.type === 'direct') {
          lines.push(
            `You: ${inbound.channel} user ${inbound.sender.id}${options.isOwner(inbound) ? ' (owner)' : ''}`,
          );
        }
        lines.push(...(options.statusLines?.(inbound, session) ?? []));
        return lines.join('\n');
      }
      case 'sessions': {
        const kinds = command.args.map((k) => k.toLowerCase());
        const details = await callTool(session, 'sessions_list', {
          limit: 20,
          ...(kinds.length > 0 ? { kinds } : {}),
        });
        return isToolProblem(details)
          ? renderProblem(details)
          : renderSessionList(details as SessionsListToolResult, now());
      }
      case 'history': {
        const [key, count] = command.args;
        if (!key) return usage('history');
        const limit = count === undefined ? 10 : Number(count);
        if (!Number.isInteger(limit) || limit < 1 || limit > 50) {
          return `The count must be a whole number from 1 to 50. ${usage('history')}`;
        }
        const details = await callTool(session, 'sessions_history', { sessionKey: key, limit });
        return isToolProblem(details)
          ? renderProblem(details)
          : renderHistory(details as SessionsHistoryResult);
      }
      case 'search': {
        if (command.rest === '') return usage('search');
        const details = await callTool(session, 'sessions_search', { query: command.rest, limit: 10 });
        return isToolProblem(details)
          ? renderProblem(details)
          : renderSearch(details as SessionsSearchToolResult, now());
      }
      case 'send': {
        const policy = parseSendCommand(inbound.text.trim());
        if (policy !== undefined) {
          return 'Only the owner can turn sending on or off for this chat.';
        }
        const [key] = command.args;
        const message = key === undefined ? '' : command.rest.slice(key.length).trim();
        if (!key || message === '') return usage('send');
        const details = (await callTool(session, 'sessions_send', {
          sessionKey: key,
          message,
          timeoutSeconds: 0,
        })) as SessionsSendResult;
        if (!isToolProblem(details) && details.status === 'accepted') {
          postReplyLater(session, details.runId, details.sessionKey);
        }
        return renderSendResult(details);
      }
      case 'spawn': {
        if (command.rest === '') return usage('spawn');
        const details = await callTool(session, 'sessions_spawn', { task: command.rest });
        return details === undefined ? unavailable('spawn') : renderSpawn(details as SessionsSpawnResult);
      }
      case 'subagents': {
        const [action = 'list', target, ...words] = command.args;
        const verb = action.toLowerCase();
        if (verb !== 'list' && verb !== 'steer' && verb !== 'kill') return usage('subagents');
        if (verb !== 'list' && !target) return usage('subagents');
        if (verb === 'steer' && words.length === 0) return usage('subagents');
        const message = verb === 'steer' ? command.rest.replace(/^\S+\s+\S+\s*/, '') : undefined;
        const details = await callTool(session, 'subagents', {
          action: verb,
          ...(target ? { target } : {}),
          ...(message ? { message } : {}),
        });
        return details === undefined
          ? unavailable('subagents')
          : renderSubagents(details as SubagentsResult, now());
      }
      case 'tree': {
        const details = (await callTool(session, 'subagents', { action: 'list' })) as
          | SubagentsResult
          | undefined;
        if (details === undefined) return unavailable('tree');
        if (isToolProblem(details)) return renderProblem(details);
        if (details.action !== 'list' || details.subagents.length === 0) return NO_SUBAGENTS;
        const maxChars = options.maxTextLength?.(inbound.channel);
        return renderSpawnTreeForChat(details, maxChars === undefined ? {} : { maxChars });
      }
      case 'new':
        return options.newSession
          ? options.newSession(session)
          : 'Starting a fresh conversation is not available here.';
      default:
        return helpText();
    }
  }

  const hook: CommandsHook = {
    // Called for every message: a parse and, for plain text, the model check; nothing is stored.
    matches: (inbound, session) =>
      parseSlashCommand(inbound.text) !== undefined || options.modelMissing?.(session) !== undefined,
    answer: async (inbound, session) => {
      const command = parseSlashCommand(inbound.text);
      if (command) {
        try {
          return await run(command, inbound, session);
        } catch (error) {
          const message = isColloquyError(error) || error instanceof Error ? error.message : String(error);
          return `/${command.name} failed: ${message}`;
        }
      }
      return options.modelMissing?.(session);
    },
  };

  return {
    hook,
    commandList: SLASH_COMMANDS.map(({ name, description }) => ({ name, description })),
    run,
  };
}

function helpText(): string {
  return [
    'Commands:',
    ...SLASH_COMMANDS.map((c) => `${c.usage} — ${c.description}`),
    'The owner can also send /send on, /send off or /send inherit to control replies in this chat.',
  ].join('\n');
}

function usage(name: string): string {
  const command = SLASH_COMMANDS.find((c) => c.name === name);
  return `Usage: ${command?.usage ?? `/${name}`}`;
}

function unavailable(name: string): string {
  return `/${name} is not available: this build has no sub-agent tools.`;
}
