import {
  type BackoffOptions,
  type ChannelCapabilities,
  type ChannelContext,
  type ChannelPlugin,
  type ChannelStatus,
  ColloquyError,
  type DeliveryContext,
  isColloquyError,
  type Logger,
  type OutboundMessage,
  receiveUntilStored,
  type SendResult,
  silentLogger,
  type ThreadRequest,
} from '@colloquy/core';
import { DISCORD_MESSAGE_LIMIT } from '@colloquy/markdown';
import {
  type APIChannel,
  ChannelType,
  type ChatInputCommandInteraction,
  type Guild,
  type Message,
  type REST,
  type RESTPostAPIChannelThreadsJSONBody,
  type RESTPostAPIGuildForumThreadsJSONBody,
  Routes,
  ThreadAutoArchiveDuration,
} from 'discord.js';
import { checkAccess, requiresMention } from './access-policy.js';
import { type BindingKeeper, createBindingKeeper } from './binding-keeper.js';
import {
  type DiscordConfig,
  type DiscordConfigInput,
  resolveAccountToken,
  resolveDiscordConfig,
} from './config.js';
import { type AccountState, createDiscordAccount, type DiscordAccount } from './discord-account.js';
import {
  DISCORD_CHANNEL_ID,
  interactionToInbound,
  isIgnoredAuthor,
  mentionsUser,
  originOfInteraction,
  originOfMessage,
  toInboundMessage,
} from './inbound.js';
import {
  deleteSent,
  editContent,
  isUnknownChannel,
  openDirectChannel,
  sendChunks,
  toChannelError,
} from './outbound.js';
import {
  ARGS_OPTION,
  answerCommand,
  PendingInteractions,
  refuseCommand,
  registerGuildCommands,
  toCommandPayload,
} from './slash-commands.js';

/** Options of {@link createDiscordPlugin}. */
export interface DiscordPluginOptions {
  /** The `channels.discord` config section; validated with {@link resolveDiscordConfig}. */
  config: DiscordConfigInput;
  /**
   * Discord REST overrides for every account. `api` is the API root (default
   * `https://discord.com/api`); point it at a REST proxy, or at a local fake in tests. An account's
   * `apiRoot` setting wins over it.
   */
  rest?: { api?: string; timeoutMs?: number };
  /**
   * Replaces the gateway URL Discord returns from `GET /gateway/bot` (a gateway proxy). Resumes
   * still use the `resume_gateway_url` of the READY event. Default: the URL Discord returns. An
   * account's `gatewayUrl` setting wins over it.
   */
  gatewayUrl?: string;
  /** Where `tokenEnv` is read. Default `process.env`. */
  env?: Record<string, string | undefined>;
  /** The clock for binding expiry (epoch ms). Default `Date.now`. */
  now?: () => number;
  /**
   * How long a message the store could not take (the database restarting) waits before it is handed
   * to the runtime again; the gateway does not deliver it again, so it is retried until stored or
   * the plugin stops, and the later messages of its channel wait behind it. Default 500 ms doubling
   * to 10 s.
   */
  receiveBackoff?: BackoffOptions;
  /**
   * Without `ctx.runCommand`, slash commands go to the runtime like messages and its reply answers
   * the deferred interaction; after this long without one the interaction says the answer follows
   * in the chat. Default 30000 ms.
   */
  commandReplyTimeoutMs?: number;
}

/** What the Discord plugin can do. */
export const DISCORD_CAPABILITIES: ChannelCapabilities = {
  threads: true,
  threadKind: 'thread',
  edits: true,
  reactions: false,
  media: true,
  typing: true,
  maxTextLength: DISCORD_MESSAGE_LIMIT,
  markdown: 'discord',
};

interface AccountRuntime {
  account: DiscordAccount;
  log: Logger;
  /** user id -> DM channel id, learned from inbound DMs and from opened DMs. */
  dmChannels: Map<string, string>;
  /** Guilds whose slash commands are registered (or being registered). */
  commandGuilds: Set<string>;
  /** Discord channel id -> the last addressed message there that has no reply yet. */
  triggers: Map<string, { messageId: string; at: number }>;
}

/** A reply later than this after its trigger no longer quotes it. */
const TRIGGER_TTL_MS = 10 * 60_000;
/** The answer to a slash command the runtime did not take (it was shutting down, the store failed). */
const NOT_TAKEN = 'The bot could not take this command just now; send it again in a moment.';

const STATE_RANK: Record<AccountState, number> = {
  connected: 0,
  standby: 1,
  starting: 2,
  reconnecting: 3,
  disconnected: 4,
  'logged-out': 5,
  error: 6,
};

/**
 * Creates the Discord channel plugin on discord.js v14: one gateway connection per bot account,
 * DMs, guild channels and threads in, chunked replies out, thread bindings with idle expiry, and
 * `/status`-style slash commands per guild.
 *
 * @param options - the `channels.discord` section and optional REST/gateway overrides
 * @returns the plugin, to hand to the runtime
 * @throws ColloquyError `CONFIG_INVALID` when the section is invalid (at creation), or when a
 *   `tokenEnv` variable is unset (at `start`)
 * @example
 * ```ts
 * import { createDiscordPlugin } from '@colloquy/plugin-discord';
 *
 * const discord = createDiscordPlugin({
 *   config: { accounts: [{ tokenEnv: 'DISCORD_TOKEN' }], guilds: { '123': { requireMention: false } } },
 * });
 * const runtime = createRuntime({ config, store, plugins: [discord] });
 * await runtime.start();
 * ```
 */
export function createDiscordPlugin(options: DiscordPluginOptions): ChannelPlugin {
  const config: DiscordConfig = resolveDiscordConfig(options.config);
  const idleMs = config.threadBindings.idleMinutes * 60_000;
  const now = options.now ?? Date.now;
  const accounts = new Map<string, AccountRuntime>();
  let context: ChannelContext | undefined;
  let keeper: BindingKeeper | undefined;
  let sweepTimer: NodeJS.Timeout | undefined;
  let commandPayload: ReturnType<typeof toCommandPayload> = [];
  let phase: 'idle' | 'started' | 'stopped' = 'idle';
  let pendingCommands = new PendingInteractions(30_000, silentLogger);
  /** Aborted by stop(): ends the retries of messages the store could not take yet. */
  let stopping = new AbortController();
  /** Per channel, the hand-over of its latest message: the next one waits for it, to keep the order. */
  const handing = new Map<string, Promise<void>>();

  const live = (): { ctx: ChannelContext; keeper: BindingKeeper } | undefined =>
    context !== undefined && keeper !== undefined && phase === 'started'
      ? { ctx: context, keeper }
      : undefined;

  const started = (): { ctx: ChannelContext; keeper: BindingKeeper } => {
    const running = live();
    if (running === undefined) {
      throw new ColloquyError('CHANNEL_ERROR', 'The Discord plugin is not running: call start(ctx) first.');
    }
    return running;
  };

  const runtimeFor = (accountId: string): AccountRuntime => {
    const runtime = accounts.get(accountId);
    if (runtime === undefined) {
      throw new ColloquyError(
        'CHANNEL_ERROR',
        `No Discord account "${accountId}" is running. Add it to channels.discord.accounts.`,
        { accountId, known: [...accounts.keys()] },
      );
    }
    return runtime;
  };

  // --- inbound ---

  const onMessage = async (runtime: AccountRuntime, message: Message): Promise<void> => {
    const running = live();
    if (running === undefined || isIgnoredAuthor(message)) return;
    const { ctx, keeper } = running;
    const { account, log } = runtime;
    const origin = originOfMessage(message);
    const access = checkAccess(config, origin);
    if (!access.allowed) {
      log.debug({ messageId: message.id, reason: access.reason }, 'discord message dropped');
      return;
    }
    let addressed =
      origin.guildId === undefined ||
      mentionsUser(message, account.botUserId) ||
      !requiresMention(config, origin);
    if (message.channel.isThread()) {
      const binding = await keeper.active(account.accountId, message.channelId);
      if (binding !== undefined) {
        await keeper.touch(binding);
        // A bound thread is a conversation with its session: no mention needed.
        addressed = true;
      }
    }
    if (origin.guildId === undefined) runtime.dmChannels.set(message.author.id, message.channelId);
    if (addressed) runtime.triggers.set(message.channelId, { messageId: message.id, at: now() });
    const inbound = toInboundMessage(message, {
      accountId: account.accountId,
      botUserId: account.botUserId,
      mentionsBot: addressed,
    });
    const channelId = message.channelId;
    const handed = (handing.get(channelId) ?? Promise.resolve())
      .then(() =>
        receiveUntilStored((m) => ctx.receive(m), inbound, {
          signal: stopping.signal,
          ...(options.receiveBackoff ? { backoff: options.receiveBackoff } : {}),
          onRetry: (error, attempt) =>
            log.warn(
              { err: error, messageId: message.id, attempt },
              'discord message not stored; trying again',
            ),
        }),
      )
      .catch((error: unknown) => {
        log.error({ err: error, messageId: message.id }, 'runtime refused a discord message');
      });
    handing.set(channelId, handed);
    void handed.finally(() => {
      if (handing.get(channelId) === handed) handing.delete(channelId);
    });
  };

  const onInteraction = async (
    runtime: AccountRuntime,
    interaction: ChatInputCommandInteraction,
  ): Promise<void> => {
    const running = live();
    if (running === undefined || interaction.user.bot) return;
    const { ctx, keeper } = running;
    const { account, log } = runtime;
    const access = checkAccess(config, originOfInteraction(interaction));
    if (!access.allowed) {
      log.debug({ interactionId: interaction.id, reason: access.reason }, 'discord command refused');
      refuseCommand(interaction).catch((error: unknown) =>
        log.warn({ err: error }, 'could not refuse a command'),
      );
      return;
    }
    const inbound = interactionToInbound(interaction, {
      accountId: account.accountId,
      args: interaction.options.getString(ARGS_OPTION) ?? '',
    });
    if (inbound.threadId !== undefined) {
      const binding = await keeper.active(account.accountId, inbound.threadId);
      if (binding !== undefined) await keeper.touch(binding);
    }
    const failed = (error: unknown): void =>
      log.warn({ err: error, command: interaction.commandName }, 'could not answer a discord command');
    if (ctx.runCommand !== undefined) {
      answerCommand(interaction, { inbound, runCommand: ctx.runCommand.bind(ctx), log }).catch(failed);
      return;
    }
    // No command runner: the runtime answers through send(), replying to the interaction id. A
    // command it did not take is answered so, not left to the note that says it was passed on.
    pendingCommands
      .defer(interaction)
      .then(async () => {
        try {
          await ctx.receive(inbound);
        } catch (error) {
          failed(error);
          await pendingCommands.answer(interaction.id, NOT_TAKEN);
        }
      })
      .catch(failed);
  };

  const onGuild = (runtime: AccountRuntime, guild: Guild): void => {
    const { account, log, commandGuilds } = runtime;
    if (commandGuilds.has(guild.id)) return;
    if (
      config.allowGuilds !== undefined &&
      config.allowGuilds.length > 0 &&
      !config.allowGuilds.includes(guild.id)
    ) {
      return;
    }
    commandGuilds.add(guild.id);
    registerGuildCommands(account.client.rest, account.applicationId, guild.id, commandPayload).catch(
      (error: unknown) => {
        commandGuilds.delete(guild.id);
        log.warn(
          { err: error, guildId: guild.id },
          'could not register slash commands; invite the bot with the applications.commands scope',
        );
      },
    );
  };

  // --- outbound ---

  /** The Discord channel a delivery context points at: the thread, the user's DM, or the channel. */
  const channelFor = async (runtime: AccountRuntime, to: DeliveryContext): Promise<string> => {
    if (to.threadId !== undefined) return to.threadId;
    const dm = runtime.dmChannels.get(to.to);
    if (dm !== undefined) return dm;
    const { client } = runtime.account;
    if (!client.channels.cache.has(to.to) && client.users.cache.has(to.to)) return openDm(runtime, to.to);
    return to.to;
  };

  const openDm = async (runtime: AccountRuntime, userId: string): Promise<string> => {
    const channelId = await openDirectChannel(runtime.account.client.rest, userId);
    runtime.dmChannels.set(userId, channelId);
    return channelId;
  };

  const touchThread = async (accountId: string, threadId: string | undefined): Promise<void> => {
    if (threadId === undefined || keeper === undefined) return;
    const binding = await keeper.active(accountId, threadId);
    if (binding !== undefined) await keeper.touch(binding);
  };

  const send = async (to: DeliveryContext, message: OutboundMessage): Promise<SendResult> => {
    started();
    const runtime = runtimeFor(to.accountId);
    if (message.text.trim() === '') {
      throw new ColloquyError(
        'INVALID_ARGUMENT',
        'Cannot send a blank message to Discord: give it some text.',
      );
    }
    const answered = await pendingCommands.answer(message.replyToMessageId, message.text);
    if (answered !== undefined) return { messageId: answered[0]!, messageIds: answered };
    const rest = runtime.account.client.rest;
    const channelId = await channelFor(runtime, to);
    await touchThread(to.accountId, to.threadId);
    // The first reply after an addressed message quotes it, unless the caller chose what to quote.
    const trigger = runtime.triggers.get(channelId);
    runtime.triggers.delete(channelId);
    if (
      message.replyToMessageId === undefined &&
      trigger !== undefined &&
      now() - trigger.at < TRIGGER_TTL_MS
    ) {
      message = { ...message, replyToMessageId: trigger.messageId };
    }
    try {
      return await sendChunks(rest, channelId, message);
    } catch (error) {
      // A user id we have not seen this run (e.g. after a restart): open the DM and send there.
      const sentIds = isColloquyError(error) ? error.details.sentMessageIds : undefined;
      const nothingSent = Array.isArray(sentIds) && sentIds.length === 0;
      if (to.threadId === undefined && channelId === to.to && nothingSent && isUnknownChannel(error)) {
        return sendChunks(rest, await openDm(runtime, to.to), message);
      }
      throw error;
    }
  };

  /**
   * Acts on a message already sent to `to`: in its channel, or (a user id this run has not seen,
   * e.g. after a restart) in the DM channel opened for it.
   */
  const inSentChannel = async (
    to: DeliveryContext,
    act: (rest: REST, channelId: string) => Promise<void>,
  ): Promise<void> => {
    started();
    const runtime = runtimeFor(to.accountId);
    const rest = runtime.account.client.rest;
    const channelId = await channelFor(runtime, to);
    try {
      await act(rest, channelId);
    } catch (error) {
      if (to.threadId !== undefined || channelId !== to.to || !isUnknownChannel(error)) throw error;
      await act(rest, await openDm(runtime, to.to));
    }
  };

  const editMessage = (to: DeliveryContext, messageId: string, message: OutboundMessage): Promise<void> =>
    inSentChannel(to, (rest, channelId) => editContent(rest, channelId, messageId, message));

  const deleteMessage = (to: DeliveryContext, messageId: string): Promise<void> =>
    inSentChannel(to, (rest, channelId) => deleteSent(rest, channelId, messageId));

  const sendTyping = async (to: DeliveryContext): Promise<void> => {
    started();
    const runtime = runtimeFor(to.accountId);
    try {
      const channelId = await channelFor(runtime, to);
      await runtime.account.client.rest.post(Routes.channelTyping(channelId));
    } catch (error) {
      // Typing is cosmetic: never fail a run over it.
      runtime.log.debug({ err: error, to: to.to }, 'discord typing indicator failed');
    }
  };

  const createThread = async (request: ThreadRequest): Promise<DeliveryContext & { threadId: string }> => {
    const { keeper } = started();
    const runtime = runtimeFor(request.parent.accountId);
    const parentId = request.parent.to;
    const cached = runtime.account.client.channels.cache.get(parentId);
    if (runtime.dmChannels.has(parentId) || cached?.isDMBased()) {
      throw new ColloquyError(
        'NOT_SUPPORTED',
        'Discord has no threads in direct messages: spawn from a server channel, or without thread: true.',
        { parent: request.parent },
      );
    }
    const name = (request.title.trim() || 'Session').slice(0, 100);
    const auto_archive_duration = archiveDuration(config.threadBindings.idleMinutes);
    const rest = runtime.account.client.rest;
    let thread: APIChannel;
    try {
      const forum = isForumType(cached?.type ?? (await fetchChannelType(rest, parentId)));
      let route: `/${string}`;
      let body: RESTPostAPIChannelThreadsJSONBody | RESTPostAPIGuildForumThreadsJSONBody;
      if (forum) {
        // A forum post is a thread that opens with a message; it cannot start from an existing one.
        route = Routes.threads(parentId);
        body = {
          name,
          auto_archive_duration,
          message: { content: name, allowed_mentions: { parse: [] } },
        };
      } else {
        route =
          request.fromMessageId === undefined
            ? Routes.threads(parentId)
            : Routes.threads(parentId, request.fromMessageId);
        body = { name, auto_archive_duration };
        if (request.fromMessageId === undefined) body.type = ChannelType.PublicThread;
      }
      thread = (await rest.post(route, { body })) as APIChannel;
    } catch (error) {
      throw toChannelError(error, `create a thread in channel ${parentId}`, { parent: request.parent });
    }
    await keeper.bind({
      accountId: request.parent.accountId,
      conversationId: parentId,
      threadId: thread.id,
      sessionKey: request.sessionKey,
    });
    runtime.log.info({ threadId: thread.id, sessionKey: request.sessionKey }, 'discord thread bound');
    const { threadId: _ignored, ...parent } = request.parent;
    return { ...parent, channel: DISCORD_CHANNEL_ID, threadId: thread.id };
  };

  // --- lifecycle ---

  const stop = async (): Promise<void> => {
    if (phase === 'stopped' || phase === 'idle') {
      phase = phase === 'idle' ? 'idle' : 'stopped';
      return;
    }
    phase = 'stopped';
    stopping.abort();
    pendingCommands.clear();
    if (sweepTimer !== undefined) clearInterval(sweepTimer);
    sweepTimer = undefined;
    await Promise.all([...accounts.values()].map((runtime) => runtime.account.stop()));
  };

  const start = async (ctx: ChannelContext): Promise<void> => {
    if (phase === 'started') {
      throw new ColloquyError(
        'CONFLICT',
        'The Discord plugin is already started: stop() it before starting again.',
      );
    }
    const tokens = config.accounts.map((account, index) => resolveAccountToken(account, index, options.env));
    context = ctx;
    stopping = new AbortController();
    keeper = createBindingKeeper({ access: ctx.threadBindings, idleMs, now });
    pendingCommands = new PendingInteractions(options.commandReplyTimeoutMs ?? 30_000, ctx.log);
    commandPayload = toCommandPayload(ctx.commands);
    accounts.clear();
    phase = 'started';
    const removed = await keeper.sweep();
    if (removed > 0) ctx.log.info({ removed }, 'expired discord thread bindings removed');
    config.accounts.forEach((accountConfig, index) => {
      const log = ctx.log.child({ channel: DISCORD_CHANNEL_ID, accountId: accountConfig.accountId });
      const runtime: AccountRuntime = {
        log,
        dmChannels: new Map(),
        commandGuilds: new Set(),
        triggers: new Map(),
        account: createDiscordAccount({
          accountId: accountConfig.accountId,
          token: tokens[index]!,
          // An account's own apiRoot/gatewayUrl (config) wins over the plugin-wide options (code).
          rest: restOptions(options.rest, accountConfig.apiRoot),
          gatewayUrl: accountConfig.gatewayUrl ?? options.gatewayUrl,
          log,
          onMessage: (message) =>
            void onMessage(runtime, message).catch((error: unknown) =>
              log.error({ err: error, messageId: message.id }, 'could not handle a discord message'),
            ),
          onInteraction: (interaction) =>
            void onInteraction(runtime, interaction).catch((error: unknown) =>
              log.error({ err: error, interactionId: interaction.id }, 'could not handle a discord command'),
            ),
          onGuild: (guild) => onGuild(runtime, guild),
          ...(ctx.lease ? { lease: ctx.lease.bind(ctx), signal: ctx.signal } : {}),
        }),
      };
      accounts.set(accountConfig.accountId, runtime);
    });
    const results = await Promise.allSettled(
      [...accounts.values()].map((runtime) => runtime.account.start()),
    );
    const failed = results.find((result): result is PromiseRejectedResult => result.status === 'rejected');
    if (failed !== undefined) {
      await stop();
      throw failed.reason;
    }
    if (idleMs > 0) {
      sweepTimer = setInterval(() => keeper?.sweep(), Math.max(1000, Math.min(idleMs / 2, 60_000)));
      sweepTimer.unref();
    }
  };

  const status = (): ChannelStatus => {
    if (phase === 'idle' || accounts.size === 0)
      return { state: phase === 'idle' ? 'starting' : 'disconnected' };
    const list = [...accounts.values()].map((runtime) => ({
      accountId: runtime.account.accountId,
      ...runtime.account.status(),
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

  return {
    id: DISCORD_CHANNEL_ID,
    capabilities: DISCORD_CAPABILITIES,
    start,
    stop,
    send,
    editMessage,
    deleteMessage,
    sendTyping,
    createThread,
    status,
  };
}

function restOptions(
  rest: DiscordPluginOptions['rest'],
  apiRoot: string | undefined,
): { api?: string; timeout?: number } {
  const result: { api?: string; timeout?: number } = {};
  const api = apiRoot ?? rest?.api;
  if (api !== undefined) result.api = api;
  if (rest?.timeoutMs !== undefined) result.timeout = rest.timeoutMs;
  return result;
}

/** Forum and media channels hold posts: threads that open with a message. */
function isForumType(type: ChannelType | undefined): boolean {
  return type === ChannelType.GuildForum || type === ChannelType.GuildMedia;
}

/** The type of a channel the client has not cached (`undefined` when Discord will not say). */
async function fetchChannelType(rest: REST, channelId: string): Promise<ChannelType | undefined> {
  try {
    return ((await rest.get(Routes.channel(channelId))) as APIChannel).type;
  } catch {
    // Creating the thread will fail with Discord's own reason; report that one.
    return undefined;
  }
}

/** The shortest auto-archive period Discord allows that outlasts the binding's idle time. */
function archiveDuration(idleMinutes: number): ThreadAutoArchiveDuration {
  const allowed = [
    ThreadAutoArchiveDuration.OneHour,
    ThreadAutoArchiveDuration.OneDay,
    ThreadAutoArchiveDuration.ThreeDays,
    ThreadAutoArchiveDuration.OneWeek,
  ];
  if (idleMinutes === 0) return ThreadAutoArchiveDuration.OneWeek;
  return allowed.find((minutes) => minutes >= idleMinutes) ?? ThreadAutoArchiveDuration.OneWeek;
}
