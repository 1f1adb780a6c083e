import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { checkTelegramHtml } from '@colloquy/markdown/testing';
import type { Message, Update } from 'grammy/types';
import { failRequest, type PlatformOutage } from '../fakes/platform-outage.js';

/** A bot account the fake serves (`getMe`). */
export interface FakeBotInfo {
  /** The bot's user id. */
  id: number;
  /** The bot's username, without `@`. */
  username: string;
  /** The bot's display name. */
  firstName?: string;
}

/** A message the bot sent. */
export interface SentMessage {
  /** The chat the message was sent to. */
  chatId: string;
  /** The message id the fake assigned. */
  messageId: number;
  /** The text as sent (HTML when `parseMode` is HTML). */
  text: string;
  /** The text as a user sees it (entities parsed). */
  visibleText: string;
  /** The `parse_mode` sent, e.g. `HTML`. */
  parseMode?: string;
  /** The forum topic it was sent to (`message_thread_id`). */
  threadId?: number;
  /** The message it replies to. */
  replyToMessageId?: number;
  /** How many times `editMessageText` changed it (`text` and `visibleText` are the latest). */
  edits?: number;
  /** Set once `deleteMessage` removed it from the chat. */
  deleted?: true;
}

/** One API call the fake received. */
export interface ApiCall {
  /** The bot token in the URL. */
  token: string;
  /** The Bot API method, e.g. `sendMessage`. */
  method: string;
  /** The call's parameters: the query string and the JSON body, merged. */
  params: Record<string, unknown>;
  /** Epoch milliseconds the call arrived. */
  at: number;
}

interface InjectedFailure {
  method: string;
  errorCode: number;
  description: string;
  retryAfter?: number;
  times: number;
}

interface Poller {
  respond: (status: number, body: unknown) => void;
}

interface BotState {
  info: FakeBotInfo;
  token: string;
  updates: Update[];
  nextUpdateId: number;
  confirmedOffset: number;
  poller: Poller | undefined;
  waiters: Set<() => void>;
  webhook: { url: string; secretToken?: string } | undefined;
  commands: { command: string; description: string }[];
  files: Map<string, { path: string; content: Buffer }>;
}

interface ChatState {
  nextMessageId: number;
  forum: boolean;
  topics: Map<number, string>;
  type: 'private' | 'group' | 'supergroup' | 'channel';
  title?: string;
}

const LONG_POLL_CAP_SECONDS = 50;

/**
 * A fake Telegram Bot API on 127.0.0.1 for offline tests, good enough for the real grammY `Bot`
 * pointed at it through `client.apiRoot`: getMe, getUpdates (long polling with offsets, 409 on a
 * second poller), sendMessage (strict HTML and length checks), editMessageText and deleteMessage
 * of the bots' own messages, sendChatAction, setMyCommands, createForumTopic, getFile and file downloads, webhooks, and injected errors (429 with
 * retry_after, 400s).
 *
 * @example
 * ```ts
 * const telegram = await FakeTelegram.start();
 * telegram.addBot('1001:test-token', { id: 1001, username: 'colloquy_bot' });
 * const plugin = createTelegramPlugin({
 *   config: { accounts: [{ accountId: 'main', token: '1001:test-token', apiRoot: telegram.apiRoot }] },
 * });
 * // users write with telegram.pushMessage(token, ...); the bot's replies land in telegram.sent
 * await telegram.close();
 * ```
 */
export class FakeTelegram {
  /** Every API call received, in order. */
  readonly calls: ApiCall[] = [];
  /** Every message bots sent, in order. */
  readonly sent: SentMessage[] = [];
  /** Every `sendChatAction` (typing indicator) received, in order. */
  readonly chatActions: { chatId: string; action: string; threadId?: number }[] = [];
  readonly #bots = new Map<string, BotState>();
  readonly #chats = new Map<string, ChatState>();
  readonly #failures: InjectedFailure[] = [];
  #outage: (PlatformOutage & { methods?: ReadonlySet<string> }) | undefined;
  readonly #changeListeners = new Set<() => void>();
  readonly #server: Server;
  #port = 0;

  private constructor() {
    this.#server = createServer((req, res) => {
      this.#handle(req, res).catch((error: unknown) => {
        if (!res.headersSent) res.writeHead(500);
        res.end(String(error));
      });
    });
  }

  /** Starts a fake on 127.0.0.1 with a free port. */
  static async start(): Promise<FakeTelegram> {
    const fake = new FakeTelegram();
    await new Promise<void>((resolve) => fake.#server.listen(0, '127.0.0.1', resolve));
    fake.#port = (fake.#server.address() as AddressInfo).port;
    return fake;
  }

  /** The value for grammY's `client.apiRoot`. */
  get apiRoot(): string {
    return `http://127.0.0.1:${this.#port}`;
  }

  /** Registers a bot token. */
  addBot(token: string, info: FakeBotInfo): void {
    this.#bots.set(token, {
      info,
      token,
      updates: [],
      nextUpdateId: 1000,
      confirmedOffset: 0,
      poller: undefined,
      waiters: new Set(),
      webhook: undefined,
      commands: [],
      files: new Map(),
    });
  }

  /** Declares a chat; forum supergroups accept createForumTopic and topic messages. */
  addChat(chatId: string | number, chat: { type: ChatState['type']; forum?: boolean; title?: string }): void {
    this.#chats.set(String(chatId), {
      nextMessageId: 1,
      forum: chat.forum ?? false,
      topics: new Map(),
      type: chat.type,
      ...(chat.title ? { title: chat.title } : {}),
    });
  }

  /** Creates a topic as a user would; returns its id. */
  addTopic(chatId: string | number, name: string): number {
    const chat = this.#chat(String(chatId));
    const id = chat.nextMessageId++;
    chat.topics.set(id, name);
    return id;
  }

  /** Topics of a forum chat by id. */
  topics(chatId: string | number): Map<number, string> {
    return this.#chat(String(chatId)).topics;
  }

  /** A fresh message id in a chat (for messages users send). */
  nextMessageId(chatId: string | number): number {
    return this.#chat(String(chatId)).nextMessageId++;
  }

  /** Queues an update; assigns the next update_id unless one is given (to replay a duplicate). */
  pushUpdate(
    token: string,
    update: { update_id?: number; message?: Message; channel_post?: Message },
  ): number {
    const bot = this.#bot(token);
    const updateId = update.update_id ?? bot.nextUpdateId++;
    bot.updates.push({ ...update, update_id: updateId } as Update);
    for (const wake of bot.waiters) wake();
    return updateId;
  }

  /** Queues a `message` update built from a partial message; returns `{ updateId, message }`. */
  pushMessage(
    token: string,
    message: Partial<Message> & { chat: Message['chat'] },
  ): { updateId: number; message: Message } {
    const full = {
      message_id: message.message_id ?? this.nextMessageId(message.chat.id),
      date: Math.floor(Date.now() / 1000),
      ...message,
    } as Message;
    const updateId = this.pushUpdate(
      token,
      full.chat.type === 'channel' ? { channel_post: full } : { message: full },
    );
    return { updateId, message: full };
  }

  /** Stores a file the bot can fetch with getFile and download. */
  addFile(token: string, fileId: string, path: string, content: Buffer): void {
    this.#bot(token).files.set(fileId, { path, content });
  }

  /** Makes the next `times` calls of `method` fail with the given error. */
  failNext(
    method: string,
    failure: { errorCode: number; description: string; retryAfter?: number; times?: number },
  ): void {
    this.#failures.push({ method, times: failure.times ?? 1, ...failure });
  }

  /**
   * Makes the Bot API fail until {@link FakeTelegram.endOutage}: every call of `methods` (all
   * when omitted) answers 502 (or `status`), or has its connection reset (`reset`). Calls are
   * still recorded in {@link FakeTelegram.calls}.
   *
   * @param outage - how the API fails, and which methods
   */
  startOutage(outage: PlatformOutage & { methods?: readonly string[] } = {}): void {
    const { methods, ...how } = outage;
    this.#outage = { ...how, ...(methods ? { methods: new Set(methods) } : {}) };
  }

  /** Ends the outage {@link FakeTelegram.startOutage} began: calls are answered again. */
  endOutage(): void {
    this.#outage = undefined;
  }

  /** The commands registered with setMyCommands. */
  commands(token: string): { command: string; description: string }[] {
    return this.#bot(token).commands;
  }

  /** The webhook set with setWebhook, if any. */
  webhook(token: string): { url: string; secretToken?: string } | undefined {
    return this.#bot(token).webhook;
  }

  /** Sets a webhook as another deployment would. */
  setWebhook(token: string, url: string): void {
    this.#bot(token).webhook = { url };
  }

  /** True while a long poll of this bot is waiting on the fake. */
  hasPendingPoll(token: string): boolean {
    return this.#bot(token).poller !== undefined;
  }

  /** The update offset the bot confirmed last (all updates below it are acknowledged). */
  confirmedOffset(token: string): number {
    return this.#bot(token).confirmedOffset;
  }

  /** Messages the bot sent to a chat (all chats when omitted). */
  sentTo(chatId?: string | number): SentMessage[] {
    return chatId === undefined ? [...this.sent] : this.sent.filter((m) => m.chatId === String(chatId));
  }

  /** Calls of one method. */
  callsOf(method: string): ApiCall[] {
    return this.calls.filter((c) => c.method === method);
  }

  /** Resolves when `predicate` holds (checked after every API call), or rejects after `timeoutMs`. */
  async waitFor<T>(predicate: () => T | undefined | false, timeoutMs = 5000, what = 'condition'): Promise<T> {
    const immediate = predicate();
    if (immediate) return immediate;
    return new Promise<T>((resolve, reject) => {
      const check = (): void => {
        const value = predicate();
        if (value) {
          cleanup();
          resolve(value);
        }
      };
      const timer = setTimeout(() => {
        cleanup();
        reject(new Error(`FakeTelegram: timed out after ${timeoutMs} ms waiting for ${what}`));
      }, timeoutMs);
      const cleanup = (): void => {
        clearTimeout(timer);
        this.#changeListeners.delete(check);
      };
      this.#changeListeners.add(check);
    });
  }

  /** Closes the server and answers pending long polls. */
  async close(): Promise<void> {
    for (const bot of this.#bots.values()) {
      for (const wake of bot.waiters) wake();
    }
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  // --- HTTP ---

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', this.apiRoot);
    const file = /^\/file\/bot([^/]+)\/(.+)$/.exec(url.pathname);
    if (file && req.method === 'GET') {
      this.#serveFile(decodeURIComponent(file[1] ?? ''), decodeURIComponent(file[2] ?? ''), res);
      return;
    }
    const call = /^\/bot([^/]+)\/([A-Za-z]+)$/.exec(url.pathname);
    if (!call) {
      this.#reply(res, 404, { ok: false, error_code: 404, description: 'Not Found' });
      return;
    }
    const token = decodeURIComponent(call[1] ?? '');
    const method = call[2] ?? '';
    const params: Record<string, unknown> = Object.fromEntries(url.searchParams);
    const body = await readBody(req);
    if (body.length > 0) Object.assign(params, JSON.parse(body.toString('utf8')));
    this.calls.push({ token, method, params, at: Date.now() });
    const bot = this.#bots.get(token);
    if (!bot) {
      this.#reply(res, 401, { ok: false, error_code: 401, description: 'Unauthorized' });
      return;
    }
    const outage = this.#outage;
    if (outage && (!outage.methods || outage.methods.has(method))) {
      const status = outage.status ?? 502;
      failRequest(outage, req, res, { ok: false, error_code: status, description: 'Bad Gateway' });
      this.#notify();
      return;
    }
    const failure = this.#takeFailure(method);
    if (failure) {
      this.#reply(res, failure.errorCode, {
        ok: false,
        error_code: failure.errorCode,
        description: failure.description,
        ...(failure.retryAfter !== undefined ? { parameters: { retry_after: failure.retryAfter } } : {}),
      });
      return;
    }
    if (method === 'getUpdates') return this.#getUpdates(bot, params, req, res);
    let outcome: { result: unknown } | { status: number; description: string };
    try {
      outcome = this.#call(bot, method, params);
    } catch (error) {
      outcome = { status: 400, description: `Bad Request: ${(error as Error).message}` };
    }
    if ('result' in outcome) this.#reply(res, 200, { ok: true, result: outcome.result });
    else
      this.#reply(res, outcome.status, {
        ok: false,
        error_code: outcome.status,
        description: outcome.description,
      });
  }

  #reply(res: ServerResponse, status: number, body: unknown): void {
    if (res.writableEnded || res.destroyed) return;
    res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    this.#notify();
  }

  #notify(): void {
    queueMicrotask(() => {
      for (const listener of [...this.#changeListeners]) listener();
    });
  }

  #takeFailure(method: string): InjectedFailure | undefined {
    const index = this.#failures.findIndex((f) => f.method === method);
    if (index === -1) return undefined;
    const failure = this.#failures[index] as InjectedFailure;
    failure.times--;
    if (failure.times <= 0) this.#failures.splice(index, 1);
    return failure;
  }

  #getUpdates(
    bot: BotState,
    params: Record<string, unknown>,
    req: IncomingMessage,
    res: ServerResponse,
  ): void {
    if (bot.webhook) {
      this.#reply(res, 409, {
        ok: false,
        error_code: 409,
        description:
          "Conflict: can't use getUpdates method while webhook is active; use deleteWebhook to delete the webhook first",
      });
      return;
    }
    if (bot.poller) {
      bot.poller.respond(409, {
        ok: false,
        error_code: 409,
        description:
          'Conflict: terminated by other getUpdates request; make sure that only one bot instance is running',
      });
    }
    const offset = Number(params.offset ?? 0);
    const limit = Math.min(Math.max(Number(params.limit ?? 100), 1), 100);
    const timeout = Math.min(Number(params.timeout ?? 0), LONG_POLL_CAP_SECONDS);
    if (offset > 0) {
      bot.updates = bot.updates.filter((u) => u.update_id >= offset);
      bot.confirmedOffset = Math.max(bot.confirmedOffset, offset);
    }
    const ready = (): Update[] =>
      bot.updates.filter((u) => offset <= 0 || u.update_id >= offset).slice(0, limit);
    const now = ready();
    if (now.length > 0 || timeout <= 0) {
      this.#reply(res, 200, { ok: true, result: now });
      return;
    }
    let done = false;
    const poller: Poller = {
      respond: (status, body) => finish(() => this.#reply(res, status, body)),
    };
    const wake = (): void => finish(() => this.#reply(res, 200, { ok: true, result: ready() }));
    const timer = setTimeout(wake, timeout * 1000);
    // The socket outlives the poll (keep-alive): its listener goes with the poll, or they pile up.
    const hangUp = (): void => finish(() => {});
    const finish = (act: () => void): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      req.socket.off('close', hangUp);
      bot.waiters.delete(wake);
      if (bot.poller === poller) bot.poller = undefined;
      act();
      this.#notify();
    };
    bot.poller = poller;
    bot.waiters.add(wake);
    this.#notify();
    req.socket.once('close', hangUp);
    res.once('close', hangUp);
  }

  #call(
    bot: BotState,
    method: string,
    p: Record<string, unknown>,
  ): { result: unknown } | { status: number; description: string } {
    switch (method) {
      case 'getMe':
        return {
          result: {
            id: bot.info.id,
            is_bot: true,
            first_name: bot.info.firstName ?? bot.info.username,
            username: bot.info.username,
            can_join_groups: true,
            can_read_all_group_messages: false,
            supports_inline_queries: false,
          },
        };
      case 'deleteWebhook':
        bot.webhook = undefined;
        if (p.drop_pending_updates) bot.updates = [];
        return { result: true };
      case 'setWebhook':
        bot.webhook = {
          url: String(p.url),
          ...(p.secret_token ? { secretToken: String(p.secret_token) } : {}),
        };
        return { result: true };
      case 'getWebhookInfo':
        return {
          result: {
            url: bot.webhook?.url ?? '',
            has_custom_certificate: false,
            pending_update_count: bot.updates.length,
          },
        };
      case 'setMyCommands': {
        const commands = p.commands as { command: string; description: string }[];
        for (const c of commands) {
          if (!/^[a-z0-9_]{1,32}$/.test(c.command)) return bad(`BOT_COMMAND_INVALID`);
          if (!c.description || c.description.length > 256) return bad('BOT_COMMAND_DESCRIPTION_INVALID');
        }
        bot.commands = commands;
        return { result: true };
      }
      case 'getMyCommands':
        return { result: bot.commands };
      case 'sendChatAction': {
        this.#chat(String(p.chat_id));
        this.chatActions.push({
          chatId: String(p.chat_id),
          action: String(p.action),
          ...(p.message_thread_id !== undefined ? { threadId: Number(p.message_thread_id) } : {}),
        });
        return { result: true };
      }
      case 'sendMessage':
        return this.#sendMessage(bot, p);
      case 'editMessageText':
        return this.#editMessageText(p);
      case 'deleteMessage': {
        const message = this.#sentMessage(p);
        if (!message) return bad('message to delete not found');
        message.deleted = true;
        return { result: true };
      }
      case 'createForumTopic': {
        const chat = this.#chat(String(p.chat_id));
        if (!chat.forum) return bad('the chat is not a forum');
        const name = String(p.name ?? '');
        if (name.length < 1 || name.length > 128) return bad('TOPIC_NAME_INVALID');
        const id = chat.nextMessageId++;
        chat.topics.set(id, name);
        return { result: { message_thread_id: id, name, icon_color: 7322096 } };
      }
      case 'getFile': {
        const file = bot.files.get(String(p.file_id));
        if (!file) return bad('invalid file_id');
        return {
          result: {
            file_id: String(p.file_id),
            file_unique_id: `u-${String(p.file_id)}`,
            file_size: file.content.length,
            file_path: file.path,
          },
        };
      }
      default:
        return { status: 404, description: 'Not Found: method not found' };
    }
  }

  #sendMessage(
    bot: BotState,
    p: Record<string, unknown>,
  ): { result: unknown } | { status: number; description: string } {
    const chatId = String(p.chat_id);
    const chat = this.#chats.get(chatId);
    if (!chat) return bad('chat not found');
    const text = messageText(p);
    if ('status' in text) return text;
    const { raw, visible } = text;
    const threadId = p.message_thread_id === undefined ? undefined : Number(p.message_thread_id);
    if (threadId !== undefined && (!chat.forum || !chat.topics.has(threadId)))
      return bad('message thread not found');
    const replyTo = (p.reply_parameters as { message_id?: number } | undefined)?.message_id;
    const messageId = chat.nextMessageId++;
    this.sent.push({
      chatId,
      messageId,
      text: raw,
      visibleText: visible,
      ...(typeof p.parse_mode === 'string' ? { parseMode: p.parse_mode } : {}),
      ...(threadId !== undefined ? { threadId } : {}),
      ...(replyTo !== undefined ? { replyToMessageId: replyTo } : {}),
    });
    return {
      result: {
        message_id: messageId,
        date: Math.floor(Date.now() / 1000),
        chat: { id: Number(chatId), type: chat.type, ...(chat.title ? { title: chat.title } : {}) },
        from: {
          id: bot.info.id,
          is_bot: true,
          first_name: bot.info.firstName ?? bot.info.username,
          username: bot.info.username,
        },
        text: visible,
        ...(threadId !== undefined ? { message_thread_id: threadId, is_topic_message: true } : {}),
      },
    };
  }

  /** A message a bot sent and nobody deleted, by `chat_id` and `message_id`. */
  #sentMessage(p: Record<string, unknown>): SentMessage | undefined {
    const chatId = String(p.chat_id);
    const messageId = Number(p.message_id);
    return this.sent.find((m) => m.chatId === chatId && m.messageId === messageId && !m.deleted);
  }

  #editMessageText(
    p: Record<string, unknown>,
  ): { result: unknown } | { status: number; description: string } {
    const message = this.#sentMessage(p);
    if (!message) return bad('message to edit not found');
    const text = messageText(p);
    if ('status' in text) return text;
    const { raw, visible } = text;
    if (raw === message.text) {
      return bad(
        'message is not modified: specified new message content and reply markup are exactly the same as a current content and reply markup of the message',
      );
    }
    message.text = raw;
    message.visibleText = visible;
    message.edits = (message.edits ?? 0) + 1;
    if (typeof p.parse_mode === 'string') message.parseMode = p.parse_mode;
    else delete message.parseMode;
    return {
      result: {
        message_id: message.messageId,
        date: Math.floor(Date.now() / 1000),
        edit_date: Math.floor(Date.now() / 1000),
        chat: { id: Number(message.chatId), type: this.#chat(message.chatId).type },
        text: visible,
      },
    };
  }

  #serveFile(token: string, path: string, res: ServerResponse): void {
    const bot = this.#bots.get(token);
    const file = bot ? [...bot.files.values()].find((f) => f.path === path) : undefined;
    if (!file) {
      res.writeHead(404).end('Not Found');
      return;
    }
    res
      .writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': file.content.length })
      .end(file.content);
  }

  #bot(token: string): BotState {
    const bot = this.#bots.get(token);
    if (!bot) throw new Error(`FakeTelegram: no bot with that token; call addBot first`);
    return bot;
  }

  #chat(chatId: string): ChatState {
    let chat = this.#chats.get(chatId);
    if (!chat) {
      chat = {
        nextMessageId: 1,
        forum: false,
        topics: new Map(),
        type: Number(chatId) > 0 ? 'private' : 'group',
      };
      this.#chats.set(chatId, chat);
    }
    return chat;
  }
}

/** The `text` of a send or an edit as sent and as a user sees it, checked as Telegram checks it. */
function messageText(
  p: Record<string, unknown>,
): { raw: string; visible: string } | { status: number; description: string } {
  const raw = typeof p.text === 'string' ? p.text : '';
  let visible = raw;
  if (p.parse_mode === 'HTML') {
    const checked = checkTelegramHtml(raw);
    if (!checked.ok) return bad(checked.error);
    visible = checked.text;
  }
  if (visible.trim() === '') return bad('message text is empty');
  if (visible.length > 4096) return bad('message is too long');
  return { raw, visible };
}

function bad(description: string): { status: number; description: string } {
  return { status: 400, description: `Bad Request: ${description}` };
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}
