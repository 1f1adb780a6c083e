import { createHmac, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type WebSocket, WebSocketServer } from 'ws';
import { failRequest, type PlatformOutage } from '../fakes/platform-outage.js';

/** A Slack user the fake knows (a person, or the app's bot user). */
export interface FakeSlackUser {
  /** The user id, e.g. `U00000001`. */
  id: string;
  /** The user's handle. */
  name: string;
  /** Whether the user is a bot. */
  isBot?: boolean;
}

/** A conversation the fake holds: a public channel, a DM (`im`) or a group DM (`mpim`). */
export interface FakeSlackConversation {
  /** The conversation id: `C…` for channels, `D…` for DMs, `G…` for group DMs. */
  id: string;
  /** What kind of conversation it is (Slack's `channel_type` of its message events). */
  type: 'channel' | 'im' | 'mpim';
  /** The channel's name (channels only). */
  name?: string;
  /** For a DM: the person on the other side of the bot. */
  user?: string;
  /** Every message posted in it, oldest first (thread replies included). */
  messages: FakeSlackMessage[];
}

/** A message as the fake stores it. */
export interface FakeSlackMessage {
  /** The message timestamp: its id within the conversation. */
  ts: string;
  /** The conversation it was posted in. */
  channel: string;
  /** The parent's `ts` when the message is a thread reply (or the parent itself once replied to). */
  thread_ts?: string;
  /** Who posted it: a user id. */
  user: string;
  /** The bot id when a bot posted it. */
  bot_id?: string;
  /** The text as Slack received it (mrkdwn). */
  text: string;
  /** Files shared with the message. */
  files?: FakeSlackFile[];
}

/** A file attached to a message, as Slack describes it in events. */
export interface FakeSlackFile {
  /** The file id, e.g. `F00000001`. */
  id: string;
  /** The file name. */
  name: string;
  /** The MIME type. */
  mimetype: string;
  /** Size in bytes. */
  size: number;
  /** Where the file is downloaded from with the bot token (served by the fake). */
  url_private: string;
}

/** One Web API call the fake received. */
export interface FakeSlackCall {
  /** The method, e.g. `chat.postMessage`. */
  method: string;
  /** The token of the `Authorization` header (empty when none). */
  token: string;
  /** The arguments, from the form or JSON body. */
  args: Record<string, unknown>;
  /** The HTTP status answered. */
  status: number;
  /** Epoch milliseconds the call arrived. */
  at: number;
}

/** A slash command the fake dispatched, and what the app answered. */
export interface FakeSlashCommand {
  /** The envelope id (Socket Mode) or trigger id (HTTP). */
  id: string;
  /** The command, with its slash. */
  command: string;
  /** When the app acknowledged it (epoch ms), if it did. */
  ackedAt?: number;
  /** What the app posted to the command's `response_url`, in order. */
  responses: Record<string, unknown>[];
}

/** Options of {@link FakeSlack.start}. */
export interface FakeSlackOptions {
  /** The bot token (`xoxb-…`) the fake accepts. Default `xoxb-fake`. */
  botToken?: string;
  /** The app-level token (`xapp-…`) that may open Socket Mode connections. Default `xapp-fake`. */
  appToken?: string;
  /** The bot user's handle. Default `colloquy`. */
  botName?: string;
  /** Public channels to create, by name. Default `['general']`. */
  channels?: string[];
  /** How often the fake pings each Socket Mode connection. Default 5000 ms. */
  pingIntervalMs?: number;
}

interface RateLimitRule {
  method: string;
  retryAfterSeconds: number;
  remaining: number;
}

/**
 * A fake Slack on 127.0.0.1 for `@slack/bolt`: the Web API methods a channel uses (`auth.test`,
 * `apps.connections.open`, `chat.postMessage`, `conversations.open`, `conversations.info`), a Socket
 * Mode WebSocket (hello, events and slash command envelopes, acks, pings, `disconnect`), signed HTTP
 * event delivery, `response_url`s, private file downloads and 429s with `Retry-After`.
 * Point Bolt at it with `clientOptions: { slackApiUrl: fake.apiUrl }`: `apps.connections.open`
 * returns this fake's `ws://127.0.0.1` URL.
 *
 * @example
 * ```ts
 * const slack = await FakeSlack.start();
 * const app = new App({ token: slack.botToken, appToken: slack.appToken, socketMode: true,
 *   clientOptions: { slackApiUrl: slack.apiUrl } });
 * await app.start();
 * const ada = slack.addUser('ada');
 * slack.say({ channel: slack.dm(ada), user: ada, text: 'hi' });
 * ```
 */
export class FakeSlack {
  /** The bot token the fake accepts. */
  readonly botToken: string;
  /** The app-level token that opens Socket Mode connections. */
  readonly appToken: string;
  /** The workspace id. */
  readonly teamId = 'T00000001';
  /** The app id. */
  readonly appId = 'A00000001';
  /** The bot id (`bot_id` of the bot's messages). */
  readonly botId = 'B00000001';
  /** The app's bot user. */
  readonly botUser: FakeSlackUser;
  /** Every user the fake knows, by id. */
  readonly users = new Map<string, FakeSlackUser>();
  /** Every conversation, by id. */
  readonly conversations = new Map<string, FakeSlackConversation>();
  /** Every Web API call received, in order. */
  readonly calls: FakeSlackCall[] = [];
  /** Every message the bot posted through `chat.postMessage`, in order. */
  readonly sentByBot: FakeSlackMessage[] = [];
  /** Acks the app sent over Socket Mode, by envelope id. */
  readonly acks = new Map<string, Record<string, unknown>>();
  /** Slash commands dispatched, in order. */
  readonly slashCommands: FakeSlashCommand[] = [];
  /** Socket Mode connections opened so far (a reconnect adds one). */
  connectionsOpened = 0;

  private readonly sockets = new Set<WebSocket>();
  private readonly tickets = new Set<string>();
  private readonly rateLimits: RateLimitRule[] = [];
  private readonly files = new Map<string, { file: FakeSlackFile; content: Buffer }>();
  private readonly pingIntervalMs: number;
  private httpEvents: { url: string; signingSecret: string } | undefined;
  private outage: (PlatformOutage & { methods?: ReadonlySet<string> }) | undefined;
  private server!: Server;
  private wss!: WebSocketServer;
  private port = 0;
  private seq = 0;
  private tsCount = 0;

  private constructor(options: FakeSlackOptions) {
    this.botToken = options.botToken ?? 'xoxb-fake';
    this.appToken = options.appToken ?? 'xapp-fake';
    this.pingIntervalMs = options.pingIntervalMs ?? 5000;
    this.botUser = { id: 'U0BOT0001', name: options.botName ?? 'colloquy', isBot: true };
    this.users.set(this.botUser.id, this.botUser);
    for (const name of options.channels ?? ['general']) {
      const id = this.nextId('C');
      this.conversations.set(id, { id, type: 'channel', name, messages: [] });
    }
  }

  /** Starts the fake on 127.0.0.1 with a free port. */
  static async start(options: FakeSlackOptions = {}): Promise<FakeSlack> {
    const fake = new FakeSlack(options);
    await fake.listen();
    return fake;
  }

  /** The Web API root to give Bolt and `@slack/web-api` as `slackApiUrl` (ends with `/`). */
  get apiUrl(): string {
    return `http://127.0.0.1:${this.port}/api/`;
  }

  // --- test controls ---

  /** Adds a person (or a foreign bot) to the workspace. */
  addUser(name: string, options: { isBot?: boolean } = {}): FakeSlackUser {
    const user: FakeSlackUser = { id: this.nextId('U'), name, ...options };
    this.users.set(user.id, user);
    return user;
  }

  /** The id of a public channel by name. */
  channelId(name: string): string {
    for (const conversation of this.conversations.values()) {
      if (conversation.type === 'channel' && conversation.name === name) return conversation.id;
    }
    throw new Error(`no channel #${name}`);
  }

  /** Opens (or finds) the DM between a user and the bot; returns its `D…` id. */
  dm(user: FakeSlackUser): string {
    for (const conversation of this.conversations.values()) {
      if (conversation.type === 'im' && conversation.user === user.id) return conversation.id;
    }
    const id = this.nextId('D');
    this.conversations.set(id, { id, type: 'im', user: user.id, messages: [] });
    return id;
  }

  /** Creates a group DM (`mpim`) of the bot and some people; returns its `G…` id. */
  groupDm(): string {
    const id = this.nextId('G');
    this.conversations.set(id, { id, type: 'mpim', messages: [] });
    return id;
  }

  /** Registers a file the bot can download from its `url_private`. */
  addFile(name: string, mimetype: string, content: string | Buffer): FakeSlackFile {
    const id = this.nextId('F');
    const data = typeof content === 'string' ? Buffer.from(content) : content;
    const file: FakeSlackFile = {
      id,
      name,
      mimetype,
      size: data.length,
      url_private: `http://127.0.0.1:${this.port}/files/${id}/${encodeURIComponent(name)}`,
    };
    this.files.set(id, { file, content: data });
    return file;
  }

  /**
   * A user posts a message; it is stored and delivered as a `message` event (over Socket Mode, or
   * signed to the HTTP endpoint after {@link FakeSlack.useHttpEvents}). Resolves once delivered.
   */
  async say(input: {
    channel: string;
    user: FakeSlackUser;
    text: string;
    threadTs?: string;
    files?: FakeSlackFile[];
  }): Promise<FakeSlackMessage> {
    const conversation = this.conversation(input.channel);
    const message: FakeSlackMessage = {
      ts: this.nextTs(),
      channel: conversation.id,
      user: input.user.id,
      text: input.text,
      ...(input.threadTs !== undefined ? { thread_ts: input.threadTs } : {}),
      ...(input.files !== undefined ? { files: input.files } : {}),
    };
    conversation.messages.push(message);
    const event: Record<string, unknown> = {
      type: 'message',
      ...(input.files !== undefined ? { subtype: 'file_share' } : {}),
      channel: conversation.id,
      channel_type: conversation.type,
      user: input.user.id,
      text: input.text,
      ts: message.ts,
      event_ts: message.ts,
      team: this.teamId,
      ...(input.threadTs !== undefined ? { thread_ts: input.threadTs } : {}),
      ...(input.files !== undefined ? { files: input.files } : {}),
      ...(input.user.isBot ? { bot_id: `B${input.user.id.slice(1)}` } : {}),
    };
    await this.deliver('events_api', {
      token: 'verification-token',
      team_id: this.teamId,
      api_app_id: this.appId,
      event,
      type: 'event_callback',
      event_id: `Ev${randomUUID().replaceAll('-', '').slice(0, 10).toUpperCase()}`,
      event_time: Math.floor(Number(message.ts)),
      authorizations: [
        { team_id: this.teamId, user_id: this.botUser.id, is_bot: true, is_enterprise_install: false },
      ],
      is_ext_shared_channel: false,
    });
    return message;
  }

  /**
   * A user runs a slash command in a conversation; dispatched as a `slash_commands` envelope (or a
   * signed form POST in HTTP mode). Its `response_url` points at this fake.
   */
  async slashCommand(input: {
    channel: string;
    user: FakeSlackUser;
    command: string;
    text?: string;
  }): Promise<FakeSlashCommand> {
    const id = randomUUID();
    const record: FakeSlashCommand = { id, command: input.command, responses: [] };
    this.slashCommands.push(record);
    await this.deliver(
      'slash_commands',
      {
        token: 'verification-token',
        team_id: this.teamId,
        team_domain: 'fake',
        channel_id: input.channel,
        channel_name: this.conversations.get(input.channel)?.name ?? 'directmessage',
        user_id: input.user.id,
        user_name: input.user.name,
        command: input.command,
        text: input.text ?? '',
        api_app_id: this.appId,
        is_enterprise_install: 'false',
        response_url: `http://127.0.0.1:${this.port}/response/${id}`,
        trigger_id: id,
      },
      id,
    );
    return record;
  }

  /** Delivers events as signed HTTP POSTs to `url` (Bolt's HTTP receiver) instead of Socket Mode. */
  useHttpEvents(url: string, signingSecret: string): void {
    this.httpEvents = { url, signingSecret };
  }

  /** Answers the next `times` calls of a Web API method with 429 and `Retry-After`. */
  rateLimitNext(method: string, retryAfterSeconds: number, times = 1): void {
    this.rateLimits.push({ method, retryAfterSeconds, remaining: times });
  }

  /**
   * Makes the Web API fail until {@link FakeSlack.endOutage}: every call of `methods` (all when
   * omitted) answers the outage's status (default 502), with its `Retry-After` if it has one, or
   * has its connection reset. The call is still recorded in {@link FakeSlack.calls} (status 0 when
   * reset). Socket Mode connections stay up, so events keep coming in.
   *
   * @param outage - how the Web API fails, and which methods (e.g. `['chat.postMessage']`)
   */
  startOutage(outage: PlatformOutage & { methods?: readonly string[] } = {}): void {
    const { methods, ...how } = outage;
    this.outage = { ...how, ...(methods ? { methods: new Set(methods) } : {}) };
  }

  /** Ends the outage {@link FakeSlack.startOutage} began: calls are answered again. */
  endOutage(): void {
    this.outage = undefined;
  }

  /** Sends `disconnect` (Slack refreshing the connection) on every Socket Mode connection. */
  requestReconnect(): void {
    for (const socket of this.sockets) {
      socket.send(JSON.stringify({ type: 'disconnect', reason: 'refresh_requested', debug_info: {} }));
    }
  }

  /** Socket Mode connections open now (0 once every client is gone). */
  get openSockets(): number {
    return this.sockets.size;
  }

  /** The bot's messages in a conversation (a thread's replies have its `thread_ts`). */
  botMessages(channel: string, threadTs?: string): FakeSlackMessage[] {
    return this.sentByBot.filter(
      (m) => m.channel === channel && (threadTs === undefined || m.thread_ts === threadTs),
    );
  }

  /** The calls of one Web API method, in order. */
  callsOf(method: string): FakeSlackCall[] {
    return this.calls.filter((call) => call.method === method);
  }

  /**
   * Polls `check` until it returns a value (not `undefined` or `false`): the fake talks to a real
   * client over sockets, so what the client does arrives later.
   *
   * @throws Error naming `what` after `timeoutMs`
   */
  async waitFor<T>(check: () => T | undefined | false, timeoutMs = 5000, what = 'condition'): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const value = check();
      if (value !== undefined && value !== false) return value;
      if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }

  /** Stops the fake: closes every socket and the server. */
  async close(): Promise<void> {
    for (const socket of this.sockets) socket.terminate();
    await new Promise<void>((resolve) => this.wss.close(() => resolve()));
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  // --- delivery ---

  private async deliver(
    type: 'events_api' | 'slash_commands',
    payload: Record<string, unknown>,
    id?: string,
  ) {
    const envelopeId = id ?? randomUUID();
    if (this.httpEvents !== undefined) {
      await this.postSigned(type, payload, envelopeId);
      return;
    }
    const frame = JSON.stringify({
      envelope_id: envelopeId,
      type,
      payload,
      accepts_response_payload: type === 'slash_commands',
      ...(type === 'events_api' ? { retry_attempt: 0, retry_reason: '' } : {}),
    });
    for (const socket of this.sockets) socket.send(frame);
  }

  private async postSigned(type: string, payload: Record<string, unknown>, id: string): Promise<void> {
    const { url, signingSecret } = this.httpEvents!;
    const body =
      type === 'events_api'
        ? JSON.stringify(payload)
        : new URLSearchParams(payload as Record<string, string>).toString();
    const timestamp = String(Math.floor(Date.now() / 1000));
    const signature = `v0=${createHmac('sha256', signingSecret).update(`v0:${timestamp}:${body}`).digest('hex')}`;
    const response = await fetch(url, {
      method: 'POST',
      headers: {
        'content-type': type === 'events_api' ? 'application/json' : 'application/x-www-form-urlencoded',
        'x-slack-request-timestamp': timestamp,
        'x-slack-signature': signature,
      },
      body,
    });
    if (response.ok) this.acked(id, {});
    await response.arrayBuffer();
  }

  private acked(id: string, payload: Record<string, unknown>): void {
    this.acks.set(id, payload);
    const command = this.slashCommands.find((c) => c.id === id);
    if (command !== undefined && command.ackedAt === undefined) command.ackedAt = Date.now();
  }

  // --- HTTP ---

  private async listen(): Promise<void> {
    this.server = createServer((req, res) => {
      this.handle(req, res).catch((error: unknown) => reply(res, 500, { ok: false, error: String(error) }));
    });
    this.wss = new WebSocketServer({ noServer: true });
    this.server.on('upgrade', (req, socket, head) => {
      const url = new URL(req.url ?? '/', 'http://127.0.0.1');
      const ticket = url.searchParams.get('ticket') ?? '';
      if (url.pathname !== '/link' || !this.tickets.delete(ticket)) {
        socket.destroy();
        return;
      }
      this.wss.handleUpgrade(req, socket, head, (ws) => this.onConnection(ws));
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as AddressInfo).port;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const raw = await readBody(req);
    if (url.pathname.startsWith('/response/')) {
      const command = this.slashCommands.find((c) => c.id === url.pathname.slice('/response/'.length));
      if (command === undefined) return reply(res, 404, { ok: false, error: 'expired_url' });
      command.responses.push(JSON.parse(raw) as Record<string, unknown>);
      return reply(res, 200, { ok: true });
    }
    const token = (req.headers.authorization ?? '').replace(/^Bearer\s+/i, '');
    if (url.pathname.startsWith('/files/')) {
      const stored = this.files.get(url.pathname.split('/')[2] ?? '');
      if (stored === undefined || token !== this.botToken) return reply(res, 404, { ok: false });
      res.writeHead(200, { 'content-type': stored.file.mimetype });
      res.end(stored.content);
      return;
    }
    const method = url.pathname.replace(/^\/api\//, '');
    const args = parseArgs(raw, req.headers['content-type'] ?? '');
    const call: FakeSlackCall = { method, token, args, status: 0, at: Date.now() };
    this.calls.push(call);
    const respond = (status: number, payload: unknown, headers: Record<string, string> = {}) => {
      call.status = status;
      reply(res, status, payload, headers);
    };
    const outage = this.outage;
    if (outage !== undefined && (outage.methods === undefined || outage.methods.has(method))) {
      call.status = outage.reset ? 0 : (outage.status ?? 502);
      return failRequest(outage, req, res, { ok: false, error: 'fatal_error' });
    }
    const limit = this.rateLimits.find((rule) => rule.remaining > 0 && rule.method === method);
    if (limit !== undefined) {
      limit.remaining -= 1;
      return respond(
        429,
        { ok: false, error: 'ratelimited' },
        { 'retry-after': String(limit.retryAfterSeconds) },
      );
    }
    if (method === 'apps.connections.open') {
      if (token !== this.appToken) return respond(200, { ok: false, error: 'invalid_auth' });
      const ticket = randomUUID();
      this.tickets.add(ticket);
      return respond(200, { ok: true, url: `ws://127.0.0.1:${this.port}/link?ticket=${ticket}` });
    }
    if (token !== this.botToken) return respond(200, { ok: false, error: 'invalid_auth' });
    respond(200, this.callMethod(method, args));
  }

  private callMethod(method: string, args: Record<string, unknown>): Record<string, unknown> {
    switch (method) {
      case 'auth.test':
        return {
          ok: true,
          url: 'https://fake.slack.test/',
          team: 'Fake',
          user: this.botUser.name,
          team_id: this.teamId,
          user_id: this.botUser.id,
          bot_id: this.botId,
          is_enterprise_install: false,
        };
      case 'conversations.open': {
        const user = this.users.get(String(args.users ?? ''));
        if (user === undefined) return { ok: false, error: 'user_not_found' };
        return { ok: true, channel: { id: this.dm(user) } };
      }
      case 'conversations.info': {
        const conversation = this.conversations.get(String(args.channel ?? ''));
        if (conversation === undefined) return { ok: false, error: 'channel_not_found' };
        return {
          ok: true,
          channel: {
            id: conversation.id,
            name: conversation.name,
            is_channel: conversation.type === 'channel',
            is_im: conversation.type === 'im',
            is_mpim: conversation.type === 'mpim',
            user: conversation.user,
          },
        };
      }
      case 'chat.postMessage':
        return this.postMessage(args);
      default:
        return { ok: false, error: 'unknown_method' };
    }
  }

  private postMessage(args: Record<string, unknown>): Record<string, unknown> {
    let channel = String(args.channel ?? '');
    // Posting to a user id posts in the app's DM with that user, as Slack does.
    const user = this.users.get(channel);
    if (user !== undefined) channel = this.dm(user);
    const conversation = this.conversations.get(channel);
    if (conversation === undefined) return { ok: false, error: 'channel_not_found' };
    const text = String(args.text ?? '');
    if (text === '') return { ok: false, error: 'no_text' };
    if (text.length > 40_000) return { ok: false, error: 'msg_too_long' };
    const threadTs = args.thread_ts === undefined ? undefined : String(args.thread_ts);
    if (threadTs !== undefined && !conversation.messages.some((m) => m.ts === threadTs)) {
      return { ok: false, error: 'thread_not_found' };
    }
    const message: FakeSlackMessage = {
      ts: this.nextTs(),
      channel,
      user: this.botUser.id,
      bot_id: this.botId,
      text,
      ...(threadTs !== undefined ? { thread_ts: threadTs } : {}),
    };
    conversation.messages.push(message);
    this.sentByBot.push(message);
    return {
      ok: true,
      channel,
      ts: message.ts,
      message: { type: 'message', text, user: message.user, bot_id: this.botId, ts: message.ts },
    };
  }

  // --- Socket Mode ---

  private onConnection(ws: WebSocket): void {
    this.connectionsOpened += 1;
    this.sockets.add(ws);
    const ping = setInterval(() => ws.ping(), this.pingIntervalMs);
    ws.on('close', () => {
      clearInterval(ping);
      this.sockets.delete(ws);
    });
    ws.on('message', (data) => {
      const frame = JSON.parse(String(data)) as { envelope_id?: string; payload?: Record<string, unknown> };
      if (frame.envelope_id !== undefined) this.acked(frame.envelope_id, frame.payload ?? {});
    });
    ws.send(
      JSON.stringify({
        type: 'hello',
        num_connections: this.sockets.size,
        debug_info: { host: 'fake', approximate_connection_time: 18060 },
        connection_info: { app_id: this.appId },
      }),
    );
  }

  // --- helpers ---

  private conversation(id: string): FakeSlackConversation {
    const conversation = this.conversations.get(id);
    if (conversation === undefined) throw new Error(`no conversation ${id}`);
    return conversation;
  }

  private nextId(prefix: string): string {
    this.seq += 1;
    return `${prefix}${String(this.seq).padStart(8, '0')}`;
  }

  /** Slack timestamps: the epoch second, a dot and six digits (a counter here), unique and increasing. */
  private nextTs(): string {
    this.tsCount += 1;
    return `${Math.floor(Date.now() / 1000)}.${String(this.tsCount).padStart(6, '0')}`;
  }
}

function reply(res: ServerResponse, status: number, payload: unknown, headers: Record<string, string> = {}) {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(payload));
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => {
      body += chunk;
    });
    req.on('end', () => resolve(body));
    req.on('error', reject);
  });
}

/** Web API arguments arrive as a form (the web-api default) or as JSON. */
function parseArgs(raw: string, contentType: string): Record<string, unknown> {
  if (raw === '') return {};
  if (contentType.includes('application/json')) return JSON.parse(raw) as Record<string, unknown>;
  const args: Record<string, unknown> = {};
  for (const [key, value] of new URLSearchParams(raw)) args[key] = value;
  return args;
}
