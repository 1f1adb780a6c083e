import {
  type ChannelCapabilities,
  type ChannelContext,
  type ChannelPlugin,
  type ChannelStatus,
  ColloquyError,
  type DeliveryContext,
  type InboundMessage,
  type OutboundMessage,
  type SendResult,
  type ThreadRequest,
  threadBindingKey,
} from '@colloquy/core';
import { renderMessages, renderText, SLACK_TEXT_LIMIT, slackMrkdwn } from '@colloquy/markdown';
import type { App, SlashCommand } from '@slack/bolt';
import {
  resolveAccountSecrets,
  resolveSlackConfig,
  type SlackConfig,
  type SlackConfigInput,
} from './config.js';
import {
  chatTypeOf,
  checkAccess,
  isPersonMessage,
  mentionsUser,
  requiresMention,
  SLACK_CHANNEL_ID,
  type SlackMessageEvent,
  toInboundMessage,
} from './inbound.js';
import { classifyWebApiFailure, waitingOutRateLimits } from './send-failures.js';
import { type AccountState, createSlackAccount, type SlackAccount } from './slack-account.js';

/** Options of {@link createSlackPlugin}. */
export interface SlackPluginOptions {
  /** The `channels.slack` config section; validated with {@link resolveSlackConfig}. */
  config: SlackConfigInput;
  /**
   * The Web API root for every account (default `https://slack.com/api/`); tests point it at a
   * local fake. An account's `apiUrl` setting wins over it.
   */
  apiUrl?: string;
  /** Where the `…Env` settings are read. Default `process.env`. */
  env?: Record<string, string | undefined>;
}

/** What the Slack plugin can do. Thread ids (`thread_ts`) are unique only within a conversation. */
export const SLACK_CAPABILITIES: ChannelCapabilities = {
  threads: true,
  threadKind: 'thread',
  threadScope: 'chat',
  edits: false,
  reactions: false,
  media: true,
  typing: false,
  maxTextLength: SLACK_TEXT_LIMIT,
  markdown: 'slack-mrkdwn',
};

/** Commands registered when the app lists none (the reference app's). */
const DEFAULT_COMMANDS = ['status', 'sessions', 'subagents'];

const STATE_RANK: Record<AccountState, number> = {
  connected: 0,
  standby: 1,
  starting: 2,
  reconnecting: 3,
  disconnected: 4,
  error: 5,
};

/**
 * Creates the Slack channel plugin on `@slack/bolt`: one app connection per account (Socket Mode by
 * default, HTTP events as an option), DMs, group DMs and channels in (channels gated on an
 * @mention), mrkdwn replies split at 4,000 characters, threads bound to sessions, slash commands,
 * and the cluster lease for Socket Mode.
 *
 * @param options - the `channels.slack` section and an optional Web API root
 * @returns the plugin, to hand to the runtime
 * @throws ColloquyError `CONFIG_INVALID` when the section is invalid (at creation), or when an
 *   `…Env` variable is unset (at `start`)
 * @example
 * ```ts
 * import { createSlackPlugin } from '@colloquy/plugin-slack';
 *
 * const slack = createSlackPlugin({
 *   config: { accounts: [{ botTokenEnv: 'SLACK_BOT_TOKEN', appTokenEnv: 'SLACK_APP_TOKEN' }] },
 * });
 * const runtime = createRuntime({ config, store, plugins: [slack] });
 * await runtime.start();
 * ```
 */
export function createSlackPlugin(options: SlackPluginOptions): ChannelPlugin {
  const config: SlackConfig = resolveSlackConfig(options.config);
  const accounts = new Map<string, SlackAccount>();
  /** `<accountId>:<user id>` -> the DM conversation id, learned from DMs and conversations.open. */
  const dmConversations = new Map<string, string>();
  let context: ChannelContext | undefined;
  let phase: 'idle' | 'started' | 'stopped' = 'idle';

  const started = (): ChannelContext => {
    if (context === undefined || phase !== 'started') {
      throw new ColloquyError('CHANNEL_ERROR', 'The Slack plugin is not running: call start(ctx) first.');
    }
    return context;
  };

  const accountFor = (accountId: string): SlackAccount => {
    const account = accounts.get(accountId);
    if (account === undefined) {
      throw new ColloquyError(
        'CHANNEL_ERROR',
        `No Slack account "${accountId}" is running. Add it to channels.slack.accounts.`,
        { accountId, known: [...accounts.keys()] },
      );
    }
    return account;
  };

  // --- inbound ---

  const onMessage = async (account: SlackAccount, event: SlackMessageEvent): Promise<void> => {
    const ctx = context;
    if (ctx === undefined || phase !== 'started' || !isPersonMessage(event)) return;
    const log = ctx.log.child({ accountId: account.accountId });
    const type = chatTypeOf(event.channel, event.channel_type);
    const access = checkAccess(config, event.channel, event.user, type === 'direct');
    if (!access.allowed) {
      log.debug({ ts: event.ts, reason: access.reason }, 'slack message dropped');
      return;
    }
    if (type === 'direct') dmConversations.set(`${account.accountId}:${event.user}`, event.channel);
    let addressed =
      type === 'direct' ||
      mentionsUser(event.text ?? '', account.botUserId) ||
      !requiresMention(config, event.channel);
    const threadTs =
      event.thread_ts !== undefined && event.thread_ts !== event.ts ? event.thread_ts : undefined;
    if (!addressed && threadTs !== undefined) {
      // A thread bound to a session is a conversation with it: no mention needed.
      const chatId = type === 'direct' ? event.user : event.channel;
      const key = threadBindingKey('chat', chatId, threadTs);
      addressed = (await ctx.threadBindings.get(account.accountId, key)) !== undefined;
    }
    const inbound = toInboundMessage(event, {
      accountId: account.accountId,
      botUserId: account.botUserId,
      mentionsBot: addressed,
    });
    ctx.receive(inbound).catch((error: unknown) => {
      log.error({ err: error, ts: event.ts }, 'runtime refused a slack message');
    });
  };

  const onCommand = async (account: SlackAccount, command: SlashCommand): Promise<void> => {
    const ctx = context;
    if (ctx === undefined || phase !== 'started') return;
    const log = ctx.log.child({ accountId: account.accountId });
    const type = chatTypeOf(command.channel_id);
    const respond = async (text: string): Promise<void> => {
      await fetch(command.response_url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ response_type: 'ephemeral', text: renderText(text, slackMrkdwn, 'plain') }),
      });
    };
    const access = checkAccess(config, command.channel_id, command.user_id, type === 'direct');
    if (!access.allowed) {
      log.debug({ command: command.command, reason: access.reason }, 'slack command refused');
      await respond('This bot does not take commands from you here.');
      return;
    }
    if (type === 'direct') dmConversations.set(`${account.accountId}:${command.user_id}`, command.channel_id);
    const inbound: InboundMessage = {
      channel: SLACK_CHANNEL_ID,
      accountId: account.accountId,
      chat: { type, id: type === 'direct' ? command.user_id : command.channel_id },
      sender: { id: command.user_id, username: command.user_name },
      text: `${command.command} ${command.text}`.trim(),
      mentionsBot: true,
      messageId: command.trigger_id,
    };
    if (ctx.runCommand === undefined) {
      // The runtime answers in the conversation, through send().
      await ctx.receive(inbound);
      return;
    }
    await respond(await ctx.runCommand(inbound));
  };

  const listen = (account: () => SlackAccount, commands: readonly string[]) => (app: App) => {
    app.event('message', async ({ event }) => {
      await onMessage(account(), event as SlackMessageEvent).catch((error: unknown) =>
        context?.log.error({ err: error }, 'could not handle a slack message'),
      );
    });
    for (const name of commands) {
      app.command(`/${name}`, async ({ command, ack }) => {
        // Slack wants the ack within 3 seconds; the answer follows on the response_url.
        await ack();
        void onCommand(account(), command).catch((error: unknown) =>
          context?.log.warn({ err: error, command: command.command }, 'could not answer a slack command'),
        );
      });
    }
  };

  // --- outbound ---

  /** The conversation a delivery context points at: a person's DM, or the conversation itself. */
  const conversationFor = async (account: SlackAccount, to: DeliveryContext): Promise<string> => {
    if (!/^[UW]/.test(to.to)) return to.to;
    const known = dmConversations.get(`${account.accountId}:${to.to}`);
    if (known !== undefined) return known;
    const opened = await waitingOutRateLimits(() => account.sendClient.conversations.open({ users: to.to }));
    const id = opened.channel?.id;
    if (id === undefined) throw new Error(`conversations.open gave no conversation for ${to.to}`);
    dmConversations.set(`${account.accountId}:${to.to}`, id);
    return id;
  };

  const post = async (
    account: SlackAccount,
    conversation: string,
    chunks: readonly string[],
    threadTs: string | undefined,
  ): Promise<string[]> => {
    const ids: string[] = [];
    for (const text of chunks) {
      try {
        const result = await waitingOutRateLimits(() =>
          account.sendClient.chat.postMessage({
            channel: conversation,
            text,
            mrkdwn: true,
            unfurl_links: false,
            ...(threadTs !== undefined ? { thread_ts: threadTs } : {}),
          }),
        );
        ids.push(result.ts ?? '');
      } catch (error) {
        const failure = classifyWebApiFailure(error);
        const advice = failure.retryable
          ? 'Slack is down or busy for now; the message can be sent again later.'
          : 'Check that the app is in the conversation and has the chat:write scope.';
        throw new ColloquyError(
          'CHANNEL_ERROR',
          `Slack refused a message to ${conversation}: ${slackError(error)}. ${advice}`,
          { conversation, sentMessageIds: ids, ...failure },
          { cause: error },
        );
      }
    }
    return ids;
  };

  const send = async (to: DeliveryContext, message: OutboundMessage): Promise<SendResult> => {
    started();
    const account = accountFor(to.accountId);
    const chunks = renderMessages(message.text, slackMrkdwn, { format: message.format ?? 'markdown' });
    if (chunks.length === 0) {
      throw new ColloquyError('INVALID_ARGUMENT', 'Cannot send a blank message to Slack: give it some text.');
    }
    const conversation = await conversationFor(account, to).catch((error: unknown) => {
      throw new ColloquyError(
        'CHANNEL_ERROR',
        `Could not open a Slack DM with ${to.to}: ${slackError(error)}.`,
        { to, ...classifyWebApiFailure(error) },
        { cause: error },
      );
    });
    const ids = await post(account, conversation, chunks, to.threadId);
    return { messageId: ids[0]!, messageIds: ids };
  };

  const createThread = async (request: ThreadRequest): Promise<DeliveryContext & { threadId: string }> => {
    const ctx = started();
    const account = accountFor(request.parent.accountId);
    let threadTs = request.fromMessageId;
    if (threadTs === undefined) {
      // A Slack thread is the replies to a message: post the title and thread under it.
      const conversation = await conversationFor(account, request.parent);
      const title = renderText(request.title.trim() || 'Session', slackMrkdwn, 'plain');
      [threadTs] = await post(account, conversation, [`*${title}*`], undefined);
    }
    const at = Date.now();
    await ctx.threadBindings.put({
      accountId: request.parent.accountId,
      conversationId: request.parent.to,
      threadId: threadBindingKey('chat', request.parent.to, threadTs!),
      sessionKey: request.sessionKey,
      createdAt: at,
      lastActiveAt: at,
    });
    ctx.log.info({ threadTs, sessionKey: request.sessionKey }, 'slack thread bound');
    const { threadId: _ignored, ...parent } = request.parent;
    return { ...parent, channel: SLACK_CHANNEL_ID, threadId: threadTs! };
  };

  // --- lifecycle ---

  const stop = async (): Promise<void> => {
    if (phase !== 'started') return;
    phase = 'stopped';
    await Promise.all([...accounts.values()].map((account) => account.stop()));
  };

  const start = async (ctx: ChannelContext): Promise<void> => {
    if (phase === 'started') {
      throw new ColloquyError(
        'CONFLICT',
        'The Slack plugin is already started: stop() it before starting again.',
      );
    }
    const secrets = config.accounts.map((_, index) => resolveAccountSecrets(config, index, options.env));
    const commands = ctx.commands.length > 0 ? ctx.commands.map((command) => command.name) : DEFAULT_COMMANDS;
    context = ctx;
    accounts.clear();
    dmConversations.clear();
    phase = 'started';
    config.accounts.forEach((accountConfig, index) => {
      const account: SlackAccount = createSlackAccount({
        accountId: accountConfig.accountId,
        secrets: secrets[index]!,
        config,
        ...((accountConfig.apiUrl ?? options.apiUrl)
          ? { apiUrl: accountConfig.apiUrl ?? options.apiUrl }
          : {}),
        log: ctx.log.child({ channel: SLACK_CHANNEL_ID, accountId: accountConfig.accountId }),
        listen: listen(() => account, commands),
        ...(ctx.lease ? { lease: ctx.lease.bind(ctx), signal: ctx.signal } : {}),
      });
      accounts.set(accountConfig.accountId, account);
    });
    const results = await Promise.allSettled([...accounts.values()].map((account) => account.start()));
    const failed = results.find((result): result is PromiseRejectedResult => result.status === 'rejected');
    if (failed !== undefined) {
      await stop();
      throw new ColloquyError(
        'CHANNEL_ERROR',
        `Slack did not connect: ${slackError(failed.reason)}. Check the tokens in channels.slack.accounts.`,
        {},
        { cause: failed.reason },
      );
    }
  };

  const status = (): ChannelStatus => {
    if (phase === 'idle' || accounts.size === 0)
      return { state: phase === 'idle' ? 'starting' : 'disconnected' };
    const list = [...accounts.values()].map((account) => ({
      accountId: account.accountId,
      ...account.status(),
    }));
    const worst = list.reduce<AccountState>(
      (acc, entry) => (STATE_RANK[entry.state] > STATE_RANK[acc] ? entry.state : acc),
      'connected',
    );
    const unhealthy = list.filter((entry) => entry.state !== 'connected');
    const result: ChannelStatus = { state: worst, accounts: list };
    if (unhealthy.length > 0) {
      result.detail = unhealthy
        .map((entry) => `${entry.accountId}: ${entry.state}${entry.detail ? ` (${entry.detail})` : ''}`)
        .join('; ');
    }
    return result;
  };

  return { id: SLACK_CHANNEL_ID, capabilities: SLACK_CAPABILITIES, start, stop, send, createThread, status };
}

/** Slack's error code (`channel_not_found`, `not_in_channel`, `invalid_auth`), else the message. */
function slackError(error: unknown): string {
  const data = (error as { data?: { error?: string } } | undefined)?.data;
  if (typeof data?.error === 'string') return data.error;
  return error instanceof Error ? error.message : String(error);
}
