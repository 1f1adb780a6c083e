import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  type BackoffOptions,
  backoffDelay,
  type ChannelCommand,
  type ChannelContext,
  type ChannelLease,
  type Logger,
} from '@colloquy/core';
import { sleep } from '@colloquy/core/internal';
import { autoRetry } from '@grammyjs/auto-retry';
import { Bot, type Context, GrammyError, webhookCallback } from 'grammy';
import type { TelegramAccountConfig } from '../config.js';
import type { BotIdentity } from '../inbound/normalize-message.js';
import { toChannelError } from '../outbound/telegram-errors.js';
import { claimToken } from '../polling/token-claims.js';

/** The state of one bot account, as shown in `status()`. */
export type AccountState = 'starting' | 'standby' | 'connected' | 'reconnecting' | 'disconnected' | 'error';

/** What an account runner needs from the plugin. */
export interface AccountRunnerOptions {
  account: TelegramAccountConfig;
  log: Logger;
  /**
   * Handles one `message` or `channel_post` update: resolves once it is stored (or deliberately
   * dropped), rejects when it was not. A rejected update is not acknowledged to Telegram: polling
   * fetches it again, a webhook delivery fails (Telegram retries).
   */
  onUpdate: (ctx: Context, runner: AccountRunner) => Promise<void>;
  commands: readonly ChannelCommand[];
  registerCommands: boolean;
  pollTimeoutSeconds: number;
  retry: { maxRetryAttempts: number; maxDelaySeconds: number };
  /** How long `start()` waits for the first connection before reporting `reconnecting`. */
  startTimeoutMs: number;
  /** How long polling waits, after an update was not stored, before it fetches that update again. */
  refetchBackoff: BackoffOptions;
  /** How long a webhook request waits for its update to be stored before it answers 500 (the update goes on). */
  webhookTimeoutMs: number;
  /**
   * The runtime's lease (`ChannelContext.lease`): polling starts only while this instance holds
   * `telegram:<botId>`, so several instances of one bot never poll at once. Webhooks need none.
   */
  lease?: ChannelContext['lease'];
}

const ALLOWED_UPDATES = ['message', 'channel_post'] as const;
const STOP_TIMEOUT_MS = 5_000;
/** How long start() waits for the polling lease before reporting `standby`. */
const LEASE_WAIT_MS = 1_000;

/**
 * One bot account: its grammY `Bot`, with 429s retried by `@grammyjs/auto-retry`, received by long
 * polling (exactly one poller per token) or by webhook.
 */
export class AccountRunner {
  readonly bot: Bot;
  readonly account: TelegramAccountConfig;
  state: AccountState = 'starting';
  detail: string | undefined;
  readonly #options: AccountRunnerOptions;
  readonly #log: Logger;
  readonly #abort = new AbortController();
  #releaseToken: (() => void) | undefined;
  #polling: Promise<void> | undefined;
  #webhook: ((req: IncomingMessage, res: ServerResponse) => Promise<void>) | undefined;
  #stopped = false;
  #receiving = true;
  #stopping: Promise<void> | undefined;
  #lease: ChannelLease | undefined;

  constructor(options: AccountRunnerOptions) {
    this.#options = options;
    this.account = options.account;
    this.#log = options.log;
    this.bot = new Bot(options.account.token, {
      client: { ...(options.account.apiRoot ? { apiRoot: options.account.apiRoot } : {}) },
    });
    const limits = {
      maxRetryAttempts: options.retry.maxRetryAttempts,
      maxDelaySeconds: options.retry.maxDelaySeconds,
    };
    // A send that meets a 5xx or an unreachable API fails at once: the runtime's delivery outbox
    // keeps the reply and sends it again, in order per chat and across restarts (grammY would
    // hold it here, unbounded for network errors). Rate limits are still waited out here.
    const sendRetry = autoRetry({ ...limits, rethrowInternalServerErrors: true, rethrowHttpErrors: true });
    const otherRetry = autoRetry({ ...limits, rethrowInternalServerErrors: false, rethrowHttpErrors: false });
    this.bot.api.config.use((prev, method, payload, signal) =>
      (method.startsWith('send') ? sendRetry : otherRetry)(prev, method, payload, signal),
    );
    if (options.account.mode === 'webhook') {
      // The HTTP answer to Telegram acknowledges the update: handle it before answering.
      this.bot.on(['message', 'channel_post'], (ctx) => options.onUpdate(ctx, this));
    } else {
      this.#receiveConcurrently(options);
    }
    this.bot.catch((error) => {
      this.#log.error({ err: error.error, updateId: error.ctx.update.update_id }, 'telegram update failed');
    });
  }

  /**
   * Polling: the updates of one getUpdates answer are handled concurrently, one chat at a time in
   * order, instead of one after another (grammY awaits each handler). A store acknowledges a message
   * once its write is durable, which may take an event-loop turn, so handling them one by one made the
   * intake of a burst the sum of those waits. The next getUpdates, which confirms the offset of every
   * update before it, waits until all of them have been handled, so a crash still loses none.
   *
   * Only what is stored is acknowledged: an update that was not (the store failed, the runtime is
   * shutting down) and the later updates of its chat, held back to keep the chat's order, are
   * fetched again. The getUpdates that follows asks from the first of them, after a backoff, and so
   * does the one `bot.stop()` sends to confirm the offset (without the wait): Telegram keeps them for
   * the next poll, or the next poller.
   */
  #receiveConcurrently(options: AccountRunnerOptions): void {
    const pending = new Set<Promise<void>>();
    const chats = new Map<string, Promise<void>>();
    /** Updates of this batch not stored, and the chats they belong to. */
    const unstored = new Set<number>();
    const heldChats = new Set<string>();
    let refetches = 0;
    this.bot.on(['message', 'channel_post'], (ctx) => {
      const chat = String(ctx.chat.id);
      const updateId = ctx.update.update_id;
      const task = (chats.get(chat) ?? Promise.resolve()).then(async () => {
        if (heldChats.has(chat)) {
          unstored.add(updateId);
          return;
        }
        try {
          await options.onUpdate(ctx, this);
        } catch (error) {
          heldChats.add(chat);
          unstored.add(updateId);
          this.#log.warn({ err: error, updateId }, 'telegram update not stored; it is fetched again');
        }
      });
      chats.set(chat, task);
      pending.add(task);
      void task.then(() => {
        pending.delete(task);
        if (chats.get(chat) === task) chats.delete(chat);
      });
    });
    this.bot.api.config.use(async (prev, method, payload, signal) => {
      if (method !== 'getUpdates') return prev(method, payload, signal);
      if (pending.size > 0) await Promise.all([...pending]);
      if (unstored.size === 0) {
        refetches = 0;
        return prev(method, payload, signal);
      }
      const from = Math.min(...unstored);
      // While polling runs; the getUpdates of bot.stop() only confirms, and does not wait.
      const polling = this.bot.isRunning();
      if (polling) {
        // grammY types its signal with the abort-controller shim; at run time it is Node's.
        const aborted = signal as unknown as AbortSignal | undefined;
        await sleep(backoffDelay(refetches++, options.refetchBackoff), aborted).catch(() => {});
      }
      const answer = await prev(method, { ...payload, offset: from } as typeof payload, signal);
      // Asked for from the first unstored update while polling: the answer brings those updates
      // again, to be handled. The answer to bot.stop() is dropped, and grammY keeps its own offset
      // past them: polling started again (the lease taken again) must still ask from here.
      if (polling) {
        unstored.clear();
        heldChats.clear();
      }
      return answer;
    });
  }

  /** The bot's identity; available once connected. */
  get identity(): BotIdentity | undefined {
    if (!this.bot.isInited()) return undefined;
    return { id: this.bot.botInfo.id, username: this.bot.botInfo.username };
  }

  /**
   * Connects: getMe, setMyCommands, then polling or webhook. Resolves once connected, failed for
   * good, or after `startTimeoutMs` (then it keeps trying in the background and reports
   * `reconnecting`).
   */
  async start(): Promise<void> {
    const launched = this.#launch().catch((error: unknown) => {
      this.#fail(toChannelError(error, 'start the bot').message);
    });
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, this.#options.startTimeoutMs);
    });
    await Promise.race([launched, timeout]);
    clearTimeout(timer);
    if (this.state === 'starting') {
      this.state = 'reconnecting';
      this.detail = 'still connecting to the Telegram Bot API';
    }
  }

  async #launch(): Promise<void> {
    const claim = claimToken(this.account.token, `account "${this.account.accountId}"`);
    if (!claim.ok) {
      this.#fail(
        `Another receiver in this process (${claim.holder}) already uses this bot token; a second poller would steal its updates. Give each account its own token.`,
      );
      return;
    }
    this.#releaseToken = claim.release;
    try {
      // grammY types its signal with the abort-controller shim; Node's AbortSignal is what it uses at run time.
      await this.bot.init(this.#abort.signal as unknown as Parameters<Bot['init']>[0]);
    } catch (error) {
      if (this.#stopped) return;
      throw error;
    }
    if (this.#stopped) return;
    await this.#registerCommands();
    if (this.account.mode === 'webhook') {
      await this.#startWebhook();
    } else {
      await this.#startPolling();
    }
  }

  async #registerCommands(): Promise<void> {
    if (!this.#options.registerCommands || this.#options.commands.length === 0) return;
    const commands = [];
    for (const c of this.#options.commands) {
      const command = c.name.replace(/^\//, '').toLowerCase();
      if (!/^[a-z0-9_]{1,32}$/.test(command)) {
        this.#log.warn({ command: c.name }, 'telegram command names are 1-32 of a-z, 0-9 and _; skipping');
        continue;
      }
      commands.push({ command, description: (c.description || command).slice(0, 256) });
    }
    try {
      await this.bot.api.setMyCommands(commands);
    } catch (error) {
      this.#log.warn({ err: toChannelError(error, 'register commands').message }, 'setMyCommands failed');
    }
  }

  async #startPolling(): Promise<void> {
    const info = await this.bot.api.getWebhookInfo();
    if (info.url !== '') {
      this.#fail(
        `Telegram has a webhook set for this bot (${info.url}); polling would delete it and take its updates. Set mode "webhook" for account "${this.account.accountId}", or call deleteWebhook for this token if that deployment is gone.`,
      );
      return;
    }
    if (!this.#options.lease) {
      await this.#poll();
      return;
    }
    const name = `telegram:${this.bot.botInfo.id}`;
    this.state = 'standby';
    this.detail = 'waiting for the lease: another instance polls this bot';
    // start() waits for polling to begin, but not for a lease another instance holds.
    let began!: () => void;
    const polling = new Promise<void>((resolve) => {
      began = resolve;
    });
    void this.#pollUnderLease(this.#options.lease, name, began);
    await Promise.race([polling, new Promise((resolve) => setTimeout(resolve, LEASE_WAIT_MS).unref())]);
  }

  /** Polls while holding the lease; when it is lost, stops polling and waits for it again. */
  async #pollUnderLease(
    lease: NonNullable<AccountRunnerOptions['lease']>,
    name: string,
    began: () => void,
  ): Promise<void> {
    while (!this.#stopped) {
      let held: ChannelLease;
      try {
        held = await lease(name, this.#abort.signal);
      } catch (error) {
        if (!this.#stopped) this.#fail(toChannelError(error, 'wait for the polling lease').message);
        return;
      }
      if (this.#stopped) {
        await held.release();
        return;
      }
      this.#lease = held;
      if (!this.#receiving) return;
      this.#log.info({ lease: name }, 'telegram: this instance polls the bot');
      const lost = new Promise<void>((resolve) =>
        held.lost.addEventListener('abort', () => resolve(), { once: true }),
      );
      await this.#poll();
      began();
      await Promise.race([
        lost,
        this.#abort.signal.aborted ? Promise.resolve() : onAbort(this.#abort.signal),
      ]);
      if (this.#stopped) return;
      this.#log.warn({ lease: name }, 'telegram: the polling lease was lost; stopping polling');
      this.#lease = undefined;
      if (this.bot.isRunning()) await this.bot.stop().catch(() => {});
      await this.#polling?.catch(() => {});
      this.state = 'standby';
      this.detail = 'lost the lease; waiting for it again';
    }
  }

  async #poll(): Promise<void> {
    await new Promise<void>((resolve) => {
      this.#polling = this.bot
        .start({
          allowed_updates: [...ALLOWED_UPDATES],
          timeout: this.#options.pollTimeoutSeconds,
          onStart: () => {
            this.state = 'connected';
            this.detail = `polling as @${this.bot.botInfo.username}`;
            this.#log.info({ username: this.bot.botInfo.username }, 'telegram polling started');
            resolve();
          },
        })
        .then(() => {
          if (!this.#stopped && this.state !== 'error') {
            this.state = 'disconnected';
            this.detail = 'polling ended';
          }
        })
        .catch((error: unknown) => {
          this.#fail(this.#pollingFailure(error));
        })
        .finally(resolve);
    });
  }

  #pollingFailure(error: unknown): string {
    if (error instanceof GrammyError && error.error_code === 409) {
      return `Telegram answered 409 Conflict: another process is receiving updates for this bot token (${error.description}). Polling for account "${this.account.accountId}" stopped so the two do not fight; stop the other instance, then restart this one.`;
    }
    return toChannelError(error, 'poll for updates').message;
  }

  async #startWebhook(): Promise<void> {
    const webhook = this.account.webhook;
    if (!webhook) return;
    if (webhook.url) {
      await this.bot.api.setWebhook(webhook.url, {
        secret_token: webhook.secretToken,
        allowed_updates: [...ALLOWED_UPDATES],
      });
    }
    this.#webhook = webhookCallback(this.bot, 'http', {
      secretToken: webhook.secretToken,
      // handleWebhook keeps the time: grammY's timeout would answer 200 before the update is stored
      // (or leave a late failure unhandled).
      timeoutMilliseconds: Number.POSITIVE_INFINITY,
    });
    this.state = 'connected';
    this.detail = `webhook at ${webhook.path} as @${this.bot.botInfo.username}`;
    this.#log.info({ path: webhook.path }, 'telegram webhook ready');
  }

  /**
   * Serves one webhook request (after the secret token check grammY performs). Answers 503 until
   * the account is connected, 200 once the update is stored, and 500 when it was not, or not within
   * `webhookTimeoutMs` (it goes on; the delivery Telegram sends again shares its outcome): Telegram
   * delivers every update not answered 200 again.
   */
  handleWebhook(req: IncomingMessage, res: ServerResponse): void {
    const handler = this.#webhook;
    if (!handler || this.#stopped || !this.#receiving) {
      res.writeHead(503, { 'content-type': 'text/plain' }).end('Telegram account not ready');
      return;
    }
    const refuse = (body: string) => {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
      if (!res.writableEnded) res.end(body);
    };
    const timer = setTimeout(() => {
      this.#log.warn('telegram webhook update not stored in time; Telegram delivers it again');
      refuse('update not stored in time');
    }, this.#options.webhookTimeoutMs);
    handler(req, res).then(
      () => clearTimeout(timer),
      (error: unknown) => {
        clearTimeout(timer);
        this.#log.error({ err: error }, 'telegram webhook update failed');
        refuse('update failed');
      },
    );
  }

  #fail(detail: string): void {
    if (this.#stopped) return;
    this.state = 'error';
    this.detail = detail;
    this.#log.error({ accountId: this.account.accountId }, detail);
    this.#releaseToken?.();
    this.#releaseToken = undefined;
  }

  /**
   * Stops taking updates (the first step of a shutdown): polling stops and confirms the offset of
   * the updates already stored; the webhook answers 503, so Telegram delivers again later. Sending
   * still works.
   */
  async stopReceiving(): Promise<void> {
    this.#receiving = false;
    await this.#stopPolling();
  }

  /** Stops long polling, if it runs; grammY confirms the offset of the updates handled. */
  async #stopPolling(): Promise<void> {
    if (this.bot.isRunning()) {
      await withTimeout(
        this.bot.stop().catch((error: unknown) => {
          this.#log.warn(
            { err: toChannelError(error, 'confirm the update offset').message },
            'telegram stop',
          );
        }),
        STOP_TIMEOUT_MS,
      );
    }
  }

  /** Stops polling (confirming the offset), stops serving the webhook, releases the token. */
  stop(): Promise<void> {
    this.#stopping ??= this.#stop();
    return this.#stopping;
  }

  async #stop(): Promise<void> {
    this.#stopped = true;
    this.#abort.abort();
    this.#webhook = undefined;
    await this.#stopPolling();
    if (this.#polling) await withTimeout(this.#polling, STOP_TIMEOUT_MS);
    await this.#lease?.release();
    this.#lease = undefined;
    this.#releaseToken?.();
    this.#releaseToken = undefined;
    this.state = 'disconnected';
    this.detail = 'stopped';
  }
}

function onAbort(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
}

async function withTimeout(task: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([task, new Promise((resolve) => (timer = setTimeout(resolve, ms)))]);
  clearTimeout(timer);
}
