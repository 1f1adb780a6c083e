import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  type BackoffOptions,
  type ChannelCapabilities,
  type ChannelContext,
  type ChannelPlugin,
  type ChannelStatus,
  ColloquyError,
  type DeliveryContext,
  type Logger,
  type OutboundMessage,
  type SendResult,
  silentLogger,
  type ThreadRequest,
} from '@colloquy/core';
import { escapeHtml, TELEGRAM_TEXT_LIMIT } from '@colloquy/markdown';
import type { Context } from 'grammy';
import { AccountRunner } from './account/account-runner.js';
import { resolveTelegramConfig, type TelegramConfig, type TelegramConfigInput } from './config.js';
import { decideDmAccess, isGroupAllowed, requiresMention } from './inbound/access-policy.js';
import { normalizeMessage, TELEGRAM_CHANNEL } from './inbound/normalize-message.js';
import { UpdateDedupe } from './inbound/update-dedupe.js';
import { downloadTelegramFile, type TelegramFile } from './outbound/download-file.js';
import { deleteSent, editText } from './outbound/edit-message.js';
import { sendText, toChatId } from './outbound/send-text.js';
import { toChannelError } from './outbound/telegram-errors.js';
import { importLegacyPairingFile } from './pairing/legacy-pairing-file.js';
import { migrateTopicBindings, topicBindingKey } from './topics/topic-bindings.js';

/** Options of {@link createTelegramPlugin}. */
export interface TelegramPluginOptions {
  /** The `channels.telegram` config section (a resolved one works too); validated by `resolveTelegramConfig`. */
  config: TelegramConfigInput;
  /**
   * Where versions before 1.0 kept `telegram-pairing.json`. Pairing state lives in the Store now
   * (`ChannelContext.pairing`); when this folder holds the old file, `start()` moves its approvals
   * and unexpired codes into the Store once and renames it `telegram-pairing.json.imported`.
   */
  stateDir?: string;
  /**
   * Bot API root for every account without an `apiRoot` setting of its own (which wins). Default
   * `https://api.telegram.org`; point it at a local Bot API server, or at a fake in tests.
   */
  apiRoot?: string;
  /** Long-poll timeout in seconds (`getUpdates` `timeout`). Default 30. */
  pollTimeoutSeconds?: number;
  /** Rate-limit retries: 429s are retried after `retry_after`. Default `{ maxRetryAttempts: 3, maxDelaySeconds: 60 }`. */
  retry?: { maxRetryAttempts?: number; maxDelaySeconds?: number };
  /** How long `start()` waits for each account to connect before reporting it `reconnecting`. Default 15000. */
  startTimeoutMs?: number;
  /**
   * How long polling waits before it fetches again an update that was not stored (the store
   * failed, the runtime was shutting down); the offset is not confirmed past it meanwhile.
   * Default `{ initialDelayMs: 1000, maxDelayMs: 30000 }`, doubling.
   */
  refetchBackoff?: BackoffOptions;
  /**
   * How long a webhook request waits for its update to be stored. Past it the request is answered
   * 500 and Telegram delivers the update again (the redelivery waits for the first attempt's
   * outcome); it is never answered 200 before the update is stored. Default 10000.
   */
  webhookTimeoutMs?: number;
  /** Register `ctx.commands` with setMyCommands at start. Default true. */
  registerCommands?: boolean;
  /** The text (Telegram HTML) a user gets with a pairing code. Default names the `colloquy pairing approve` command. */
  pairingMessage?: (code: string) => string;
  /** Minimum interval between two typing indicators to one chat/topic, in ms. Default 3000. */
  typingIntervalMs?: number;
}

/** The Telegram plugin: a `ChannelPlugin` (`@colloquy/core`) plus webhook serving and file download. */
export interface TelegramChannelPlugin extends ChannelPlugin {
  /**
   * A node:http request handler for webhook-mode accounts: routes by path to the account, checks
   * the `X-Telegram-Bot-Api-Secret-Token` header (401 when wrong), answers 404 for other paths and
   * 503 before `start()`. Mount it on the app's HTTP server.
   */
  readonly webhookHandler: (req: IncomingMessage, res: ServerResponse) => void;
  /** The paths of webhook-mode accounts, to mount `webhookHandler` on. */
  webhookPaths(): string[];
  /**
   * Downloads an inbound attachment (`MediaAttachment.ref`) through getFile.
   *
   * @throws ColloquyError `CHANNEL_ERROR` when Telegram refuses or the file exceeds `maxBytes` (default 20 MB)
   */
  downloadFile(accountId: string, fileId: string, options?: { maxBytes?: number }): Promise<TelegramFile>;
}

const DEFAULT_PAIRING_MESSAGE = (code: string): string =>
  `This bot only talks to people its owner approved.\nYour pairing code: <code>${escapeHtml(code)}</code>\nAsk the owner to run: <code>colloquy pairing approve telegram ${escapeHtml(code)}</code>`;

/**
 * Creates the Telegram channel plugin (grammY): one bot per configured account, long polling by
 * default (one poller per token; a second one is reported, not fought) or webhooks, DM policy and
 * mention gating, markdown converted to Telegram HTML and split into 4096-character messages,
 * forum topics bound to sessions.
 *
 * @param options - config section, state dir and tuning
 * @returns the plugin; pass it to the runtime
 * @throws ColloquyError `CONFIG_INVALID` when `options.config` is not a valid `channels.telegram` section
 * @example
 * ```ts
 * import { createTelegramPlugin } from '@colloquy/plugin-telegram';
 *
 * const telegram = createTelegramPlugin({
 *   config: { accounts: [{ token: process.env.TELEGRAM_BOT_TOKEN! }], dmPolicy: 'pairing' },
 * });
 * // runtime.addChannel(telegram) — the runtime calls start(ctx), send(), editMessage(), sendTyping(), createThread()
 * ```
 */
export function createTelegramPlugin(options: TelegramPluginOptions): TelegramChannelPlugin {
  const config = withApiRoot(resolveTelegramConfig(options.config), options.apiRoot);
  const typingIntervalMs = options.typingIntervalMs ?? 3000;
  const pairingMessage = options.pairingMessage ?? DEFAULT_PAIRING_MESSAGE;
  const runners = new Map<string, AccountRunner>();
  const dedupe = new Map<string, UpdateDedupe>();
  const lastTyping = new Map<string, number>();
  /** The last message that addressed the bot in each group chat/topic: the next reply quotes it. */
  const replyTargets = new Map<string, { messageId: string; at: number }>();
  let context: ChannelContext | undefined;
  let log: Logger = silentLogger;
  let started = false;
  let stopped = false;
  let stopping: Promise<void> | undefined;

  const capabilities: ChannelCapabilities = {
    threads: true,
    threadKind: 'topic',
    threadScope: 'chat',
    edits: true,
    reactions: false,
    media: true,
    typing: true,
    maxTextLength: TELEGRAM_TEXT_LIMIT,
    markdown: 'telegram-html',
  };

  const runnerFor = (accountId: string): AccountRunner => {
    const runner = runners.get(accountId);
    if (!runner) {
      const configured = config.accounts.map((a) => a.accountId).join(', ') || 'none';
      throw new ColloquyError(
        'CHANNEL_ERROR',
        `No running Telegram account "${accountId}" (configured: ${configured}). Add it under channels.telegram.accounts and start the plugin.`,
        { accountId },
      );
    }
    return runner;
  };

  const receiveUpdate = async (c: Context, runner: AccountRunner): Promise<void> => {
    const ctx = context;
    const accountId = runner.account.accountId;
    const seen = dedupe.get(accountId);
    const identity = runner.identity;
    const msg = c.update.message ?? c.update.channel_post;
    if (stopped) {
      throw new ColloquyError(
        'ABORTED',
        'The Telegram plugin is stopping and did not take this update; it stays with Telegram for the next poll.',
      );
    }
    if (!ctx || !seen || !identity || !msg) return;
    if (!seen.add(c.update.update_id)) {
      log.debug({ accountId, updateId: c.update.update_id }, 'duplicate telegram update ignored');
      return;
    }
    try {
      const normalized = normalizeMessage(msg, identity, accountId);
      if (!normalized) return;
      const inbound = normalized.message;
      if (inbound.chat.type === 'direct') {
        const decision = await decideDmAccess(config, ctx.pairing, accountId, inbound.sender);
        if (decision.action === 'drop') {
          log.info({ accountId, senderId: inbound.sender.id }, `telegram DM dropped: ${decision.reason}`);
          return;
        }
        if (decision.action === 'pair') {
          if (decision.notify) {
            await c.api.sendMessage(msg.chat.id, pairingMessage(decision.code), { parse_mode: 'HTML' });
            log.info({ accountId, senderId: inbound.sender.id }, 'telegram pairing code sent');
          }
          return;
        }
      } else {
        if (!isGroupAllowed(config, inbound.chat.id)) return;
        const bound =
          inbound.threadId !== undefined
            ? await ctx.threadBindings.get(accountId, topicBindingKey(inbound.chat.id, inbound.threadId))
            : undefined;
        const boundHere = bound !== undefined && bound.conversationId === inbound.chat.id;
        inbound.mentionsBot = normalized.addressed || boundHere || !requiresMention(config, inbound.chat.id);
      }
      if (inbound.chat.type !== 'direct' && inbound.mentionsBot) {
        const key = targetKey({ accountId, to: inbound.chat.id, threadId: inbound.threadId });
        replyTargets.set(key, { messageId: inbound.messageId, at: performance.now() });
      }
      await ctx.receive(inbound);
    } catch (error) {
      seen.forget(c.update.update_id);
      throw error;
    }
  };

  /** Updates being handled, by account and update id: a delivery of one again shares its outcome. */
  const handling = new Map<string, Promise<void>>();
  const onUpdate = (c: Context, runner: AccountRunner): Promise<void> => {
    const key = `${runner.account.accountId}:${c.update.update_id}`;
    const running = handling.get(key);
    if (running) return running;
    const task = receiveUpdate(c, runner).finally(() => handling.delete(key));
    handling.set(key, task);
    return task;
  };

  const plugin: TelegramChannelPlugin = {
    id: TELEGRAM_CHANNEL,
    capabilities,

    async start(ctx) {
      if (started) {
        throw new ColloquyError('CONFLICT', 'The Telegram plugin is already started; call stop() first.');
      }
      log = ctx.log.child({ channel: TELEGRAM_CHANNEL });
      if (options.stateDir !== undefined) await importLegacyPairingFile(options.stateDir, ctx.pairing, log);
      await migrateTopicBindings(ctx.threadBindings, log);
      started = true;
      stopped = false;
      context = ctx;
      for (const account of config.accounts) {
        dedupe.set(account.accountId, new UpdateDedupe());
        runners.set(
          account.accountId,
          new AccountRunner({
            account,
            log: log.child({ accountId: account.accountId }),
            onUpdate,
            commands: ctx.commands,
            registerCommands: options.registerCommands ?? true,
            pollTimeoutSeconds: options.pollTimeoutSeconds ?? 30,
            retry: {
              maxRetryAttempts: options.retry?.maxRetryAttempts ?? 3,
              maxDelaySeconds: options.retry?.maxDelaySeconds ?? 60,
            },
            startTimeoutMs: options.startTimeoutMs ?? 15_000,
            refetchBackoff: { initialDelayMs: 1000, maxDelayMs: 30_000, ...options.refetchBackoff },
            webhookTimeoutMs: options.webhookTimeoutMs ?? 10_000,
            ...(ctx.lease ? { lease: ctx.lease.bind(ctx) } : {}),
          }),
        );
      }
      ctx.signal.addEventListener('abort', () => void plugin.stop(), { once: true });
      await Promise.all([...runners.values()].map((r) => r.start()));
    },

    async stopReceiving() {
      await Promise.all([...runners.values()].map((r) => r.stopReceiving()));
    },

    stop() {
      if (!started) return Promise.resolve();
      stopping ??= (async () => {
        stopped = true;
        await Promise.all([...runners.values()].map((r) => r.stop()));
        runners.clear();
        lastTyping.clear();
        replyTargets.clear();
        started = false;
        stopping = undefined;
      })();
      return stopping;
    },

    async send(to: DeliveryContext, message: OutboundMessage): Promise<SendResult> {
      const runner = runnerFor(to.accountId);
      const key = targetKey(to);
      const pending = replyTargets.get(key);
      replyTargets.delete(key);
      const quote =
        message.replyToMessageId === undefined &&
        pending &&
        performance.now() - pending.at < REPLY_QUOTE_WINDOW_MS
          ? { ...message, replyToMessageId: pending.messageId }
          : message;
      const messageIds = await sendText(runner.bot.api, to, quote, log);
      lastTyping.delete(key);
      return { messageId: messageIds[0] as string, messageIds };
    },

    editMessage: (to: DeliveryContext, messageId: string, message: OutboundMessage) =>
      editText(runnerFor(to.accountId).bot.api, to, messageId, message),

    deleteMessage: (to: DeliveryContext, messageId: string) =>
      deleteSent(runnerFor(to.accountId).bot.api, to, messageId),

    async sendTyping(to: DeliveryContext): Promise<void> {
      const runner = runnerFor(to.accountId);
      const key = targetKey(to);
      const now = performance.now();
      const last = lastTyping.get(key);
      if (last !== undefined && now - last < typingIntervalMs) return;
      lastTyping.set(key, now);
      try {
        await runner.bot.api.sendChatAction(toChatId(to.to), 'typing', {
          ...(to.threadId !== undefined ? { message_thread_id: Number(to.threadId) } : {}),
        });
      } catch (error) {
        lastTyping.delete(key);
        log.debug({ err: toChannelError(error, 'show typing').message }, 'telegram typing failed');
      }
    },

    async createThread(request: ThreadRequest): Promise<DeliveryContext & { threadId: string }> {
      const ctx = context;
      const runner = runnerFor(request.parent.accountId);
      if (!ctx) throw new ColloquyError('CHANNEL_ERROR', 'Start the Telegram plugin before creating topics.');
      const name = request.title.replace(/\s+/g, ' ').trim().slice(0, 128) || 'Sub-agent';
      let topic: { message_thread_id: number };
      try {
        topic = await runner.bot.api.createForumTopic(toChatId(request.parent.to), name);
      } catch (error) {
        throw toChannelError(error, `create a forum topic in chat ${request.parent.to}`, {
          to: request.parent.to,
          accountId: request.parent.accountId,
        });
      }
      const threadId = String(topic.message_thread_id);
      const now = Date.now();
      await ctx.threadBindings.put({
        accountId: request.parent.accountId,
        conversationId: request.parent.to,
        threadId: topicBindingKey(request.parent.to, threadId),
        sessionKey: request.sessionKey,
        createdAt: now,
        lastActiveAt: now,
      });
      return {
        channel: TELEGRAM_CHANNEL,
        to: request.parent.to,
        accountId: request.parent.accountId,
        threadId,
      };
    },

    status(): ChannelStatus {
      const accounts = config.accounts.map((a) => {
        const runner = runners.get(a.accountId);
        const state = runner?.state ?? 'disconnected';
        const detail = runner?.detail ?? (started ? undefined : 'not started');
        return { accountId: a.accountId, state, ...(detail !== undefined ? { detail } : {}) };
      });
      return { ...aggregate(accounts, started), accounts };
    },

    webhookHandler(req, res) {
      const path = new URL(req.url ?? '/', 'http://localhost').pathname;
      const account = config.accounts.find((a) => a.mode === 'webhook' && a.webhook?.path === path);
      if (!account) {
        res.writeHead(404, { 'content-type': 'text/plain' }).end('Not found');
        return;
      }
      if (req.method !== 'POST') {
        res.writeHead(405, { allow: 'POST', 'content-type': 'text/plain' }).end('Method not allowed');
        return;
      }
      const runner = runners.get(account.accountId);
      if (!runner) {
        res.writeHead(503, { 'content-type': 'text/plain' }).end('Telegram plugin not started');
        return;
      }
      runner.handleWebhook(req, res);
    },

    webhookPaths() {
      return config.accounts.flatMap((a) => (a.mode === 'webhook' && a.webhook ? [a.webhook.path] : []));
    },

    async downloadFile(accountId, fileId, downloadOptions) {
      const runner = runnerFor(accountId);
      return downloadTelegramFile(runner.bot.api, runner.account, fileId, downloadOptions?.maxBytes);
    },
  };
  return plugin;
}

/** How long after a group message its reply still quotes it. */
const REPLY_QUOTE_WINDOW_MS = 10 * 60 * 1000;

function targetKey(to: Pick<DeliveryContext, 'accountId' | 'to' | 'threadId'>): string {
  return `${to.accountId}\u0000${to.to}\u0000${to.threadId ?? ''}`;
}

function aggregate(
  accounts: { state: string; detail?: string }[],
  started: boolean,
): Pick<ChannelStatus, 'state' | 'detail'> {
  if (!started) return { state: 'disconnected', detail: 'not started' };
  if (accounts.length === 0)
    return { state: 'disconnected', detail: 'no accounts under channels.telegram.accounts' };
  const failed = accounts.find((a) => a.state === 'error');
  if (failed) return { state: 'error', ...(failed.detail !== undefined ? { detail: failed.detail } : {}) };
  for (const state of ['reconnecting', 'starting', 'disconnected', 'standby'] as const) {
    if (accounts.some((a) => a.state === state)) return { state };
  }
  return { state: 'connected' };
}

/** The config with `apiRoot` filled in for the accounts that set none. */
function withApiRoot(config: TelegramConfig, apiRoot: string | undefined): TelegramConfig {
  if (apiRoot === undefined) return config;
  return {
    ...config,
    accounts: config.accounts.map((account) => ({ ...account, apiRoot: account.apiRoot ?? apiRoot })),
  };
}
