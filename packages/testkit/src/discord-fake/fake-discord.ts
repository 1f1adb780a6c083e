import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { APIAttachment, APIChannel, APIMessage } from 'discord.js';
import { type WebSocket, WebSocketServer } from 'ws';
import { failRequest, type PlatformOutage } from '../fakes/platform-outage.js';
import {
  dmChannelPayload,
  type FakeUser,
  guildChannelPayload,
  memberPayload,
  messagePayload,
  snowflake,
  threadPayload,
  userPayload,
} from './payloads.js';

export type { FakeUser } from './payloads.js';

/** A bot account the fake accepts. */
export interface FakeBot {
  /** The bot token clients authenticate with. */
  token: string;
  /** The bot's user. */
  user: FakeUser;
  /** The bot's application id (slash commands are registered under it). */
  applicationId: string;
}

/** A guild the fake holds, with its channels. */
export interface FakeGuild {
  /** The guild's snowflake id. */
  id: string;
  /** The guild's name. */
  name: string;
  /** Text channels (type 0) and forum channels (type 15). */
  channels: { id: string; name: string; forum?: true }[];
}

/** Options of {@link FakeDiscord.start}: the bots it accepts and the guilds it creates. */
export interface FakeDiscordOptions {
  /** The bot accounts to accept: their token and username. */
  bots: { token: string; username: string }[];
  /** `forums`: forum channels (type 15), where posts are threads started with a message. */
  guilds?: { name: string; channels: string[]; forums?: string[] }[];
  /** Heartbeat interval sent in HELLO. Default 1000 ms. */
  heartbeatIntervalMs?: number;
  /** What `GET /gateway/bot` reports as the gateway URL. Default: this fake's gateway. */
  advertisedGatewayUrl?: string;
  /** Close IDENTIFY with 4014 (disallowed intents) when the MessageContent intent is asked for. */
  disallowMessageContent?: boolean;
}

/** One HTTP request the fake received. */
export interface RecordedRequest {
  /** The HTTP method. */
  method: string;
  /** The request path after `/api/v10`, decoded, without the query string. */
  path: string;
  /** The query string. */
  query: URLSearchParams;
  /** The parsed JSON body; the raw text for a non-JSON body; `undefined` when there was none. */
  body: unknown;
  /** Epoch milliseconds the request arrived. */
  at: number;
  /** The HTTP status answered (0 until answered). */
  status: number;
}

/** A channel, thread or DM channel the fake holds ({@link FakeDiscord.channels}). */
export interface ChannelRecord {
  /** The channel as the REST API returns it. */
  payload: APIChannel;
  /** The guild that holds the channel; absent for DM channels. */
  guildId?: string;
  /** For DM channels: the bot on the other side. */
  dmBotId?: string;
  /** Every message posted in the channel, oldest first. */
  messages: APIMessage[];
}

interface GatewaySession {
  id: string;
  bot: FakeBot;
  seq: number;
  history: { op: 0; t: string; s: number; d: unknown }[];
  socket?: WebSocket;
}

/** A slash-command interaction the fake dispatched, and how the bot answered it ({@link FakeDiscord.interactions}). */
export interface InteractionRecord {
  /** The interaction's snowflake id. */
  id: string;
  /** The interaction token the bot answers with. */
  token: string;
  /** The bot the interaction was sent to. */
  bot: FakeBot;
  /** The channel the command was run in. */
  channelId: string;
  /** Epoch milliseconds the interaction was dispatched. */
  dispatchedAt: number;
  /** The bot's interaction callback: its type, when it arrived (epoch ms) and its message flags. */
  callback?: { type: number; at: number; flags: number };
  /** The original response, once the bot posted or edited it. */
  original?: APIMessage;
  /** Follow-up messages the bot posted, in order. */
  followUps: APIMessage[];
  /** The deferred reply was deleted instead of answered. */
  deleted?: boolean;
}

interface RateLimitRule {
  method: string;
  path: RegExp;
  retryAfterSeconds: number;
  remaining: number;
}

const MESSAGE_CONTENT_INTENT = 1 << 15;
const UNKNOWN_CHANNEL = { message: 'Unknown Channel', code: 10003 };
const UNKNOWN_MESSAGE = { message: 'Unknown Message', code: 10008 };

type Respond = (status: number, payload?: unknown, headers?: Record<string, string>) => void;

interface Route {
  method: string;
  path: RegExp;
  /** Needs `Authorization: Bot <token>` of a known bot. */
  auth: boolean;
  handle(input: { match: RegExpExecArray; body: unknown; bot: FakeBot; respond: Respond }): void;
}

/**
 * A fake of Discord on 127.0.0.1 for discord.js: the REST endpoints the plugin uses and a gateway
 * WebSocket (HELLO, IDENTIFY/READY, GUILD_CREATE, RESUME with replay, heartbeat ACK, RECONNECT).
 * A real discord.js Client talks to it through `rest.api` and the URL `GET /gateway/bot` returns.
 *
 * @example
 * ```ts
 * const discord = await FakeDiscord.start({ bots: [{ token: 'bot-token', username: 'colloquy' }] });
 * // point the plugin's REST `api` option at discord.apiRoot; it finds discord.gatewayUrl itself
 * await discord.close();
 * ```
 */
export class FakeDiscord {
  /** The bot accounts the fake accepts. */
  readonly bots: FakeBot[];
  /** The guilds the fake created. */
  readonly guilds: FakeGuild[] = [];
  /** Every user the fake knows, by id. */
  readonly users = new Map<string, FakeUser>();
  /** Every channel and thread the fake holds, by id. */
  readonly channels = new Map<string, ChannelRecord>();
  /** Every REST request received, in order. */
  readonly requests: RecordedRequest[] = [];
  /** IDENTIFY payloads received, in order. */
  readonly identifies: { token: string; intents: number }[] = [];
  /** RESUME payloads received, in order. */
  readonly resumes: { sessionId: string; seq: number }[] = [];
  /** Query strings of gateway connections (v, encoding, compress). */
  readonly gatewayQueries: URLSearchParams[] = [];
  /** Guild slash commands registered by bots, by `<applicationId>:<guildId>`. */
  readonly registeredCommands = new Map<string, unknown[]>();
  /**
   * Every message a bot posted through REST, in order. A message a bot edited holds its latest
   * content (and `edited_timestamp`); one it deleted stays here, its id in {@link deletedMessageIds}.
   */
  readonly sentByBots: APIMessage[] = [];
  /** Ids of the messages deleted through REST, in the order they were deleted. */
  readonly deletedMessageIds: string[] = [];
  /** Slash-command interactions the fake dispatched, by interaction token. */
  readonly interactions = new Map<string, InteractionRecord>();
  /** How many heartbeats the fake acknowledged. */
  heartbeatAcks = 0;

  private readonly sessions = new Map<string, GatewaySession>();
  private readonly readOnly = new Set<string>();
  private readonly rateLimits: RateLimitRule[] = [];
  private outage: (PlatformOutage & { path?: RegExp }) | undefined;
  private readonly sockets = new Set<WebSocket>();
  private server!: Server;
  private wss!: WebSocketServer;
  private port = 0;

  private constructor(private readonly options: FakeDiscordOptions) {
    this.bots = options.bots.map((bot) => ({
      token: bot.token,
      user: { id: snowflake(), username: bot.username, bot: true },
      applicationId: snowflake(),
    }));
    for (const bot of this.bots) this.users.set(bot.user.id, bot.user);
    for (const guild of options.guilds ?? [{ name: 'Guild', channels: ['general'] }]) {
      const id = snowflake();
      const channels: FakeGuild['channels'] = [
        ...guild.channels.map((name) => ({ id: snowflake(), name })),
        ...(guild.forums ?? []).map((name) => ({ id: snowflake(), name, forum: true as const })),
      ];
      this.guilds.push({ id, name: guild.name, channels });
      for (const channel of channels) {
        this.channels.set(channel.id, {
          payload: guildChannelPayload(id, channel),
          guildId: id,
          messages: [],
        });
      }
    }
  }

  /** Starts the fake on 127.0.0.1 with a free port. */
  static async start(options: FakeDiscordOptions): Promise<FakeDiscord> {
    const fake = new FakeDiscord(options);
    await fake.listen();
    return fake;
  }

  /** The REST root to give discord.js as `rest.api`. */
  get apiRoot(): string {
    return `http://127.0.0.1:${this.port}/api`;
  }

  /** The gateway URL (what `GET /gateway/bot` returns by default). */
  get gatewayUrl(): string {
    return `ws://127.0.0.1:${this.port}/gateway`;
  }

  // --- test controls ---

  /** Adds a human (or a foreign bot) the fake knows. */
  addUser(username: string, options: { bot?: boolean; globalName?: string } = {}): FakeUser {
    const user: FakeUser = { id: snowflake(), username, ...options };
    this.users.set(user.id, user);
    return user;
  }

  /** The id of a guild text or forum channel by name (first guild unless given). */
  channelId(name: string, guildIndex = 0): string {
    const channel = this.guilds[guildIndex]?.channels.find((c) => c.name === name);
    if (channel === undefined) throw new Error(`no channel ${name}`);
    return channel.id;
  }

  /** Opens (or finds) the DM channel between a user and a bot. */
  dmChannel(user: FakeUser, bot: FakeBot = this.bots[0]!): string {
    for (const [id, record] of this.channels) {
      if (
        record.dmBotId === bot.user.id &&
        (record.payload as { recipients?: { id: string }[] }).recipients?.[0]?.id === user.id
      ) {
        return id;
      }
    }
    const id = snowflake();
    this.channels.set(id, { payload: dmChannelPayload(id, user), dmBotId: bot.user.id, messages: [] });
    return id;
  }

  /** A user posts a message; it is stored and dispatched as MESSAGE_CREATE. */
  say(input: {
    channelId: string;
    author: FakeUser;
    content: string;
    replyTo?: string;
    attachments?: Omit<APIAttachment, 'id'>[];
    webhookId?: string;
  }): APIMessage {
    const record = this.channelRecord(input.channelId);
    const referenced = input.replyTo ? record.messages.find((m) => m.id === input.replyTo) : undefined;
    const message = messagePayload({
      id: snowflake(),
      channelId: input.channelId,
      guildId: record.guildId,
      author: input.author,
      content: input.content,
      mentions: this.mentionedUsers(input.content),
      attachments: input.attachments?.map((a) => ({ ...a, id: snowflake() })),
      referenced,
      webhookId: input.webhookId,
    });
    record.messages.push(message);
    this.dispatchToChannel(record, 'MESSAGE_CREATE', { ...message, channel_type: record.payload.type });
    return message;
  }

  /**
   * A user opens a post in a forum channel: a thread (type 11, parent the forum) whose first message
   * has the thread's id, as on Discord. Dispatched as THREAD_CREATE then MESSAGE_CREATE.
   */
  forumPost(input: { forumId: string; author: FakeUser; title: string; content: string }): {
    threadId: string;
    message: APIMessage;
  } {
    const forum = this.channelRecord(input.forumId);
    if (forum.payload.type !== 15) throw new Error(`${input.forumId} is not a forum channel`);
    const thread = this.openThread(forum, input.forumId, snowflake(), input.title, input.author.id, 4320);
    const message = messagePayload({
      id: thread.payload.id,
      channelId: thread.payload.id,
      guildId: forum.guildId,
      author: input.author,
      content: input.content,
      mentions: this.mentionedUsers(input.content),
    });
    thread.messages.push(message);
    this.dispatchToChannel(thread, 'MESSAGE_CREATE', { ...message, channel_type: 11 });
    return { threadId: thread.payload.id, message };
  }

  /** Messages posted in a channel (or thread), oldest first. */
  messagesIn(channelId: string): APIMessage[] {
    return this.channels.get(channelId)?.messages ?? [];
  }

  /** Messages a bot posted in a channel (or thread). */
  botMessages(channelId: string, bot: FakeBot = this.bots[0]!): APIMessage[] {
    return this.messagesIn(channelId).filter((m) => m.author.id === bot.user.id);
  }

  /** Threads (channel type 11) created under a parent channel. */
  threadsOf(parentId: string): APIChannel[] {
    return [...this.channels.values()]
      .map((record) => record.payload)
      .filter((payload) => payload.type === 11 && (payload as { parent_id?: string }).parent_id === parentId);
  }

  /** Answers the next `times` requests matching with 429 and a Retry-After. */
  rateLimitNext(method: string, path: RegExp, retryAfterSeconds: number, times = 1): void {
    this.rateLimits.push({ method, path, retryAfterSeconds, remaining: times });
  }

  /**
   * Makes the REST API fail until {@link FakeDiscord.endOutage}: every request whose path (after
   * `/api/v10`) matches `path` (all when omitted) answers 502 (or `status`), or has its connection
   * reset (`reset`). The gateway WebSocket stays up. Requests are still recorded.
   *
   * @param outage - how the API fails, and which paths
   */
  startOutage(outage: PlatformOutage & { path?: RegExp } = {}): void {
    this.outage = outage;
  }

  /** Ends the outage {@link FakeDiscord.startOutage} began: requests are answered again. */
  endOutage(): void {
    this.outage = undefined;
  }

  /** Makes a channel refuse the bot's messages with 403 Missing Permissions. */
  denySend(channelId: string): void {
    this.readOnly.add(channelId);
  }

  /** Sends RECONNECT (op 7) on every open gateway connection. */
  forceReconnect(): void {
    for (const session of this.sessions.values()) this.send(session.socket, { op: 7, d: null });
  }

  /** Cuts every gateway connection without a close frame (a network drop). */
  dropConnections(): void {
    for (const socket of this.sockets) socket.terminate();
  }

  /** Gateway connections still open (0 once every client is gone). */
  get openSockets(): number {
    return this.sockets.size;
  }

  /** Where a message was posted, as Colloquy names it: a DM by its user, a thread by parent + thread. */
  locate(channelId: string): { chatId: string; threadId?: string } {
    const payload = this.channelRecord(channelId).payload as {
      type: number;
      parent_id?: string;
      recipients?: { id: string }[];
    };
    if (payload.type === 1) return { chatId: payload.recipients![0]!.id };
    if (payload.type === 11) return { chatId: payload.parent_id!, threadId: channelId };
    return { chatId: channelId };
  }

  /** Whether a bot currently has an open gateway connection. */
  isConnected(bot: FakeBot = this.bots[0]!): boolean {
    return [...this.sessions.values()].some((s) => s.bot === bot && s.socket?.readyState === 1);
  }

  /** A user runs a slash command; dispatched as INTERACTION_CREATE. Returns the interaction token. */
  slashCommand(input: {
    channelId: string;
    user: FakeUser;
    name: string;
    args?: string;
    bot?: FakeBot;
  }): string {
    const bot = input.bot ?? this.bots[0]!;
    const record = this.channelRecord(input.channelId);
    const id = snowflake();
    const token = `interaction-token-${id}`;
    this.interactions.set(token, {
      id,
      token,
      bot,
      channelId: input.channelId,
      dispatchedAt: Date.now(),
      followUps: [],
    });
    const payload: Record<string, unknown> = {
      id,
      application_id: bot.applicationId,
      type: 2,
      token,
      version: 1,
      channel_id: input.channelId,
      channel: record.payload,
      app_permissions: '2248473465835073',
      locale: 'en-US',
      entitlements: [],
      authorizing_integration_owners: { '0': record.guildId ?? '0' },
      context: record.guildId ? 0 : 1,
      attachment_size_limit: 10_485_760,
      data: {
        id: snowflake(),
        name: input.name,
        type: 1,
        ...(input.args !== undefined ? { options: [{ name: 'args', type: 3, value: input.args }] } : {}),
      },
    };
    if (record.guildId !== undefined) {
      payload.guild_id = record.guildId;
      payload.guild_locale = 'en-US';
      payload.member = { ...memberPayload(input.user), permissions: '2248473465835073' };
    } else {
      payload.user = userPayload(input.user);
    }
    for (const session of this.sessions.values())
      if (session.bot === bot) this.dispatch(session, 'INTERACTION_CREATE', payload);
    return token;
  }

  /** Resolves when `check` returns a value other than undefined/false, polling every 20 ms. */
  async waitFor<T>(
    check: () => T | undefined | false | Promise<T | undefined | false>,
    timeoutMs = 5000,
    what = 'condition',
  ): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const value = await check();
      if (value !== undefined && value !== false) return value;
      if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  /** Closes every gateway connection and the HTTP server. */
  async close(): Promise<void> {
    for (const socket of this.sockets) socket.terminate();
    await new Promise<void>((resolve) => this.wss.close(() => resolve()));
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  // --- HTTP ---

  private async listen(): Promise<void> {
    this.server = createServer((req, res) => {
      this.handle(req, res).catch((error: unknown) => {
        this.reply(res, 500, { message: String(error), code: 0 });
      });
    });
    this.wss = new WebSocketServer({ noServer: true });
    this.server.on('upgrade', (req, socket, head) => {
      const url = new URL(req.url ?? '/', 'http://127.0.0.1');
      if (url.pathname !== '/gateway') {
        socket.destroy();
        return;
      }
      this.gatewayQueries.push(url.searchParams);
      this.wss.handleUpgrade(req, socket, head, (ws) => this.onConnection(ws));
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as AddressInfo).port;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const body = await readJson(req);
    const method = req.method ?? 'GET';
    const path = decodeURIComponent(url.pathname).replace(/^\/api\/v10/, '');
    const record: RecordedRequest = {
      method,
      path,
      query: url.searchParams,
      body,
      at: Date.now(),
      status: 0,
    };
    this.requests.push(record);
    const respond: Respond = (status, payload, headers = {}) => {
      record.status = status;
      this.reply(res, status, payload, headers);
    };

    const outage = this.outage;
    if (outage && (outage.path === undefined || outage.path.test(path))) {
      record.status = outage.reset ? 0 : (outage.status ?? 502);
      failRequest(outage, req, res, { message: '502: Bad Gateway', code: 0 });
      return;
    }
    const limit = this.rateLimits.find(
      (rule) => rule.remaining > 0 && rule.method === method && rule.path.test(path),
    );
    if (limit !== undefined) {
      limit.remaining -= 1;
      respond(
        429,
        { message: 'You are being rate limited.', retry_after: limit.retryAfterSeconds, global: false },
        {
          'retry-after': String(limit.retryAfterSeconds),
          'x-ratelimit-limit': '5',
          'x-ratelimit-remaining': '0',
          'x-ratelimit-reset-after': String(limit.retryAfterSeconds),
          'x-ratelimit-bucket': 'fake-bucket',
          'x-ratelimit-scope': 'user',
        },
      );
      return;
    }

    const bot = this.bots.find((b) => req.headers.authorization === `Bot ${b.token}`);
    for (const route of this.routes) {
      if (route.method !== method) continue;
      const match = route.path.exec(path);
      if (match === null) continue;
      // Interaction callbacks and webhooks authenticate with the token in the path.
      if (route.auth && bot === undefined) {
        respond(401, { message: '401: Unauthorized', code: 0 });
        return;
      }
      route.handle({ match, body, bot: bot!, respond });
      return;
    }
    respond(404, { message: '404: Not Found', code: 0 });
  }

  private readonly routes: Route[] = [
    {
      method: 'POST',
      path: /^\/interactions\/(\d+)\/([^/]+)\/callback$/,
      auth: false,
      handle: ({ match, body, respond }) => {
        const interaction = this.interactions.get(match[2]!);
        const late = interaction !== undefined && Date.now() - interaction.dispatchedAt > 3000;
        if (interaction === undefined || interaction.callback !== undefined || late) {
          respond(404, { message: 'Unknown interaction', code: 10062 });
          return;
        }
        const { type, data } = body as { type: number; data?: { content?: string; flags?: number } };
        interaction.callback = { type, at: Date.now(), flags: data?.flags ?? 0 };
        if (data?.content !== undefined)
          interaction.original = this.webhookMessage(interaction, data.content);
        respond(204);
      },
    },
    {
      method: 'PATCH',
      path: /^\/webhooks\/(\d+)\/([^/]+)\/messages\/@original$/,
      auth: false,
      handle: ({ match, body, respond }) => {
        const interaction = this.interactions.get(match[2]!);
        if (interaction?.callback === undefined) {
          respond(404, { message: 'Unknown Webhook', code: 10015 });
          return;
        }
        interaction.original = this.webhookMessage(interaction, (body as { content: string }).content);
        respond(200, interaction.original);
      },
    },
    {
      method: 'DELETE',
      path: /^\/webhooks\/(\d+)\/([^/]+)\/messages\/@original$/,
      auth: false,
      handle: ({ match, respond }) => {
        const interaction = this.interactions.get(match[2]!);
        if (interaction?.callback === undefined) {
          respond(404, { message: 'Unknown Webhook', code: 10015 });
          return;
        }
        interaction.deleted = true;
        respond(204);
      },
    },
    {
      method: 'POST',
      path: /^\/webhooks\/(\d+)\/([^/]+)$/,
      auth: false,
      handle: ({ match, body, respond }) => {
        const interaction = this.interactions.get(match[2]!);
        if (interaction?.callback === undefined) {
          respond(404, { message: 'Unknown Webhook', code: 10015 });
          return;
        }
        const message = this.webhookMessage(interaction, (body as { content: string }).content);
        interaction.followUps.push(message);
        respond(200, message);
      },
    },
    {
      method: 'GET',
      path: /^\/gateway\/bot$/,
      auth: true,
      handle: ({ respond }) =>
        respond(200, {
          url: this.options.advertisedGatewayUrl ?? this.gatewayUrl,
          shards: 1,
          session_start_limit: { total: 1000, remaining: 999, reset_after: 0, max_concurrency: 1 },
        }),
    },
    {
      method: 'GET',
      path: /^\/users\/@me$/,
      auth: true,
      handle: ({ bot, respond }) => respond(200, userPayload(bot.user)),
    },
    {
      method: 'POST',
      path: /^\/users\/@me\/channels$/,
      auth: true,
      handle: ({ body, bot, respond }) => {
        const user = this.users.get((body as { recipient_id: string }).recipient_id);
        if (user === undefined) respond(400, { message: 'Invalid Form Body', code: 50035 });
        else respond(200, this.channels.get(this.dmChannel(user, bot))!.payload);
      },
    },
    {
      method: 'GET',
      path: /^\/channels\/(\d+)$/,
      auth: true,
      handle: ({ match, respond }) => {
        const channel = this.channels.get(match[1]!);
        if (channel === undefined) respond(404, UNKNOWN_CHANNEL);
        else respond(200, channel.payload);
      },
    },
    {
      method: 'POST',
      path: /^\/channels\/(\d+)\/typing$/,
      auth: true,
      handle: ({ match, respond }) => {
        if (!this.channels.has(match[1]!)) respond(404, UNKNOWN_CHANNEL);
        else respond(204);
      },
    },
    {
      method: 'POST',
      path: /^\/channels\/(\d+)\/messages$/,
      auth: true,
      handle: ({ match, body, bot, respond }) => this.createMessage(match[1]!, body, bot, respond),
    },
    {
      method: 'PATCH',
      path: /^\/channels\/(\d+)\/messages\/(\d+)$/,
      auth: true,
      handle: ({ match, body, bot, respond }) => this.editMessage(match[1]!, match[2]!, body, bot, respond),
    },
    {
      method: 'DELETE',
      path: /^\/channels\/(\d+)\/messages\/(\d+)$/,
      auth: true,
      handle: ({ match, bot, respond }) => this.deleteMessage(match[1]!, match[2]!, bot, respond),
    },
    {
      method: 'POST',
      path: /^\/channels\/(\d+)(?:\/messages\/(\d+))?\/threads$/,
      auth: true,
      handle: ({ match, body, bot, respond }) => this.createThread(match[1]!, match[2], body, bot, respond),
    },
    {
      method: 'PUT',
      path: /^\/applications\/(\d+)\/guilds\/(\d+)\/commands$/,
      auth: true,
      handle: ({ match, body, respond }) => {
        const [, applicationId, guildId] = match;
        const commands = (body as { name: string }[]).map((command) => ({
          ...command,
          id: snowflake(),
          application_id: applicationId,
          guild_id: guildId,
          version: snowflake(),
          default_member_permissions: null,
        }));
        this.registeredCommands.set(`${applicationId}:${guildId}`, commands);
        respond(200, commands);
      },
    },
  ];

  private createMessage(channelId: string, body: unknown, bot: FakeBot, respond: Respond): void {
    const channel = this.channels.get(channelId);
    if (channel === undefined || (channel.dmBotId !== undefined && channel.dmBotId !== bot.user.id)) {
      respond(404, UNKNOWN_CHANNEL);
      return;
    }
    if (this.readOnly.has(channelId)) {
      respond(403, { message: 'Missing Permissions', code: 50013 });
      return;
    }
    if (channel.payload.type === 15) {
      respond(400, { message: 'Cannot send messages in a non-text channel', code: 50008 });
      return;
    }
    const { content, message_reference } = body as {
      content?: string;
      message_reference?: { message_id: string };
    };
    if (content === undefined || content.length === 0 || content.length > 2000) {
      respond(400, {
        message: 'Invalid Form Body',
        code: 50035,
        errors: { content: 'BASE_TYPE_MAX_LENGTH' },
      });
      return;
    }
    const referenced = channel.messages.find((m) => m.id === message_reference?.message_id);
    const message = messagePayload({
      id: snowflake(),
      channelId,
      guildId: channel.guildId,
      author: bot.user,
      content,
      mentions: [],
      referenced,
    });
    channel.messages.push(message);
    this.sentByBots.push(message);
    respond(200, message);
    // Discord echoes the bot's own messages on the gateway: the bot must ignore them.
    this.dispatchToChannel(channel, 'MESSAGE_CREATE', { ...message, channel_type: channel.payload.type });
  }

  /**
   * The message a bot acts on, when it is in the channel and the bot wrote it; otherwise answers
   * as Discord does (404 Unknown Channel or Message, 403 `notOwn`) and returns `undefined`.
   */
  private ownMessage(
    channelId: string,
    messageId: string,
    bot: FakeBot,
    respond: Respond,
    notOwn: { message: string; code: number },
  ): { channel: ChannelRecord; index: number; current: APIMessage } | undefined {
    const channel = this.channels.get(channelId);
    if (channel === undefined) {
      respond(404, UNKNOWN_CHANNEL);
      return undefined;
    }
    const index = channel.messages.findIndex((m) => m.id === messageId);
    const current = channel.messages[index];
    if (current === undefined) {
      respond(404, UNKNOWN_MESSAGE);
      return undefined;
    }
    if (current.author.id !== bot.user.id) {
      respond(403, notOwn);
      return undefined;
    }
    return { channel, index, current };
  }

  /** PATCH a message: only its author may change the content, as on Discord. */
  private editMessage(
    channelId: string,
    messageId: string,
    body: unknown,
    bot: FakeBot,
    respond: Respond,
  ): void {
    const found = this.ownMessage(channelId, messageId, bot, respond, {
      message: 'Cannot edit a message authored by another user',
      code: 50005,
    });
    if (found === undefined) return;
    const { channel, index, current } = found;
    const { content } = body as { content?: string };
    if (content !== undefined && (content.length === 0 || content.length > 2000)) {
      respond(400, {
        message: 'Invalid Form Body',
        code: 50035,
        errors: { content: 'BASE_TYPE_MAX_LENGTH' },
      });
      return;
    }
    const edited: APIMessage = {
      ...current,
      ...(content !== undefined ? { content } : {}),
      edited_timestamp: new Date().toISOString(),
    };
    channel.messages[index] = edited;
    const sentIndex = this.sentByBots.findIndex((m) => m.id === messageId);
    if (sentIndex >= 0) this.sentByBots[sentIndex] = edited;
    respond(200, edited);
    this.dispatchToChannel(channel, 'MESSAGE_UPDATE', { ...edited, channel_type: channel.payload.type });
  }

  /** DELETE a message: a bot may delete its own messages (deleting others' needs Manage Messages). */
  private deleteMessage(channelId: string, messageId: string, bot: FakeBot, respond: Respond): void {
    const found = this.ownMessage(channelId, messageId, bot, respond, {
      message: 'Missing Permissions',
      code: 50013,
    });
    if (found === undefined) return;
    const { channel, index } = found;
    channel.messages.splice(index, 1);
    this.deletedMessageIds.push(messageId);
    respond(204);
    this.dispatchToChannel(channel, 'MESSAGE_DELETE', {
      id: messageId,
      channel_id: channelId,
      ...(channel.guildId !== undefined ? { guild_id: channel.guildId } : {}),
    });
  }

  private createThread(
    parentId: string,
    fromMessageId: string | undefined,
    body: unknown,
    bot: FakeBot,
    respond: Respond,
  ): void {
    const parent = this.channels.get(parentId);
    if (parent === undefined || parent.guildId === undefined) {
      respond(404, UNKNOWN_CHANNEL);
      return;
    }
    const { name, auto_archive_duration, message } = body as {
      name: string;
      auto_archive_duration?: number;
      message?: { content?: string };
    };
    if (parent.payload.type !== 15) {
      // A thread started from a message takes the message's id, as on Discord.
      const thread = this.openThread(
        parent,
        parentId,
        fromMessageId ?? snowflake(),
        name,
        bot.user.id,
        auto_archive_duration ?? 1440,
      );
      respond(201, thread.payload);
      return;
    }
    // A forum post: no starting message id, and the post's first message is required.
    if (fromMessageId !== undefined) {
      respond(400, { message: 'Cannot execute action on this channel type', code: 50024 });
      return;
    }
    const content = message?.content ?? '';
    if (content.length === 0 || content.length > 2000) {
      respond(400, { message: 'Invalid Form Body', code: 50035, errors: { message: 'BASE_TYPE_REQUIRED' } });
      return;
    }
    const thread = this.openThread(
      parent,
      parentId,
      snowflake(),
      name,
      bot.user.id,
      auto_archive_duration ?? 4320,
    );
    const starter = messagePayload({
      id: thread.payload.id,
      channelId: thread.payload.id,
      guildId: parent.guildId,
      author: bot.user,
      content,
      mentions: [],
    });
    thread.messages.push(starter);
    this.sentByBots.push(starter);
    respond(201, { ...thread.payload, message: starter });
    this.dispatchToChannel(thread, 'MESSAGE_CREATE', { ...starter, channel_type: 11 });
  }

  /** Creates a public thread under a text or forum channel and dispatches THREAD_CREATE. */
  private openThread(
    parent: ChannelRecord,
    parentId: string,
    id: string,
    name: string,
    ownerId: string,
    autoArchiveMinutes: number,
  ): ChannelRecord {
    const payload = threadPayload({
      guildId: parent.guildId!,
      parentId,
      id,
      name,
      ownerId,
      autoArchiveMinutes,
    });
    const thread: ChannelRecord = { payload, guildId: parent.guildId, messages: [] };
    this.channels.set(id, thread);
    this.dispatchToChannel(thread, 'THREAD_CREATE', { ...payload, newly_created: true });
    return thread;
  }

  private reply(
    res: ServerResponse,
    status: number,
    payload?: unknown,
    headers: Record<string, string> = {},
  ): void {
    if (res.headersSent) return;
    if (payload === undefined) {
      res.writeHead(status, headers).end();
      return;
    }
    res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(payload));
  }

  private webhookMessage(interaction: InteractionRecord, content: string): APIMessage {
    if (content.length === 0 || content.length > 2000)
      throw new Error(`bad webhook content length ${content.length}`);
    const message = messagePayload({
      id: interaction.original?.id ?? snowflake(),
      channelId: interaction.channelId,
      author: interaction.bot.user,
      content,
      mentions: [],
      webhookId: interaction.bot.applicationId,
    });
    return message;
  }

  // --- gateway ---

  private onConnection(socket: WebSocket): void {
    this.sockets.add(socket);
    socket.on('close', () => {
      this.sockets.delete(socket);
      for (const session of this.sessions.values()) if (session.socket === socket) session.socket = undefined;
    });
    socket.on('message', (data) =>
      this.onFrame(socket, JSON.parse(String(data)) as { op: number; d: unknown }),
    );
    this.send(socket, { op: 10, d: { heartbeat_interval: this.options.heartbeatIntervalMs ?? 1000 } });
  }

  private onFrame(socket: WebSocket, frame: { op: number; d: unknown }): void {
    switch (frame.op) {
      case 1:
        this.heartbeatAcks += 1;
        this.send(socket, { op: 11 });
        return;
      case 2: {
        const { token, intents } = frame.d as { token: string; intents: number };
        this.identifies.push({ token, intents });
        const bot = this.bots.find((b) => b.token === token);
        if (bot === undefined) {
          socket.close(4004, 'Authentication failed');
          return;
        }
        if (this.options.disallowMessageContent && (intents & MESSAGE_CONTENT_INTENT) !== 0) {
          socket.close(4014, 'Disallowed intent(s)');
          return;
        }
        const session: GatewaySession = { id: snowflake(), bot, seq: 0, history: [], socket };
        this.sessions.set(session.id, session);
        this.dispatch(session, 'READY', {
          v: 10,
          user: userPayload(bot.user),
          guilds: this.guilds.map((g) => ({ id: g.id, unavailable: true })),
          session_id: session.id,
          resume_gateway_url: this.gatewayUrl,
          shard: [0, 1],
          application: { id: bot.applicationId, flags: 0 },
        });
        for (const guild of this.guilds)
          this.dispatch(session, 'GUILD_CREATE', this.guildPayload(guild, bot));
        return;
      }
      case 6: {
        const { token, session_id, seq } = frame.d as { token: string; session_id: string; seq: number };
        this.resumes.push({ sessionId: session_id, seq });
        const session = this.sessions.get(session_id);
        if (session === undefined || session.bot.token !== token) {
          this.send(socket, { op: 9, d: false });
          return;
        }
        session.socket = socket;
        for (const payload of session.history) if (payload.s > seq) this.send(socket, payload);
        this.dispatch(session, 'RESUMED', null);
        return;
      }
      default:
        return;
    }
  }

  private guildPayload(guild: FakeGuild, bot: FakeBot): unknown {
    const threads = [...this.channels.values()]
      .filter((record) => record.guildId === guild.id && record.payload.type === 11)
      .map((record) => record.payload);
    return {
      id: guild.id,
      name: guild.name,
      icon: null,
      owner_id: this.bots[0]!.user.id,
      unavailable: false,
      member_count: 2,
      large: false,
      joined_at: new Date(0).toISOString(),
      features: [],
      premium_tier: 0,
      system_channel_flags: 0,
      roles: [
        {
          id: guild.id,
          name: '@everyone',
          permissions: '2248473465835073',
          position: 0,
          color: 0,
          hoist: false,
          managed: false,
          mentionable: false,
          flags: 0,
        },
      ],
      channels: guild.channels.map((c) => guildChannelPayload(guild.id, c)),
      threads,
      members: [memberPayload(bot.user)],
      emojis: [],
      stickers: [],
      voice_states: [],
      presences: [],
      stage_instances: [],
      guild_scheduled_events: [],
    };
  }

  private dispatchToChannel(record: ChannelRecord, t: string, d: unknown): void {
    for (const session of this.sessions.values()) {
      if (record.dmBotId !== undefined && record.dmBotId !== session.bot.user.id) continue;
      this.dispatch(session, t, d);
    }
  }

  private dispatch(session: GatewaySession, t: string, d: unknown): void {
    session.seq += 1;
    const payload = { op: 0 as const, t, s: session.seq, d };
    session.history.push(payload);
    if (session.history.length > 500) session.history.shift();
    this.send(session.socket, payload);
  }

  private send(socket: WebSocket | undefined, payload: unknown): void {
    if (socket?.readyState === 1) socket.send(JSON.stringify(payload));
  }

  private channelRecord(id: string): ChannelRecord {
    const record = this.channels.get(id);
    if (record === undefined) throw new Error(`no channel ${id}`);
    return record;
  }

  private mentionedUsers(content: string): FakeUser[] {
    const users: FakeUser[] = [];
    for (const match of content.matchAll(/<@!?(\d+)>/g)) {
      const user = this.users.get(match[1]!);
      if (user !== undefined && !users.includes(user)) users.push(user);
    }
    return users;
  }
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  if (chunks.length === 0) return undefined;
  const text = Buffer.concat(chunks).toString('utf8');
  if (!(req.headers['content-type'] ?? '').includes('application/json')) return text;
  return JSON.parse(text);
}
