import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { type ChannelContext, type ChannelLease, ColloquyError, type Logger } from '@colloquy/core';
import {
  type ChatInputCommandInteraction,
  Client,
  DefaultRestOptions,
  DiscordjsErrorCodes,
  Events,
  GatewayIntentBits,
  type Guild,
  type Message,
  Partials,
  type RESTOptions,
  type ResponseLike,
} from 'discord.js';

/** The gateway intents the plugin needs. MessageContent is privileged: enable it in the Developer Portal. */
export const DISCORD_INTENTS = [
  GatewayIntentBits.Guilds,
  GatewayIntentBits.GuildMessages,
  GatewayIntentBits.MessageContent,
  GatewayIntentBits.DirectMessages,
] as const;

/** The connection state of one bot account. */
export type AccountState =
  | 'starting'
  | 'standby'
  | 'connected'
  | 'reconnecting'
  | 'disconnected'
  | 'logged-out'
  | 'error';

/** Options of {@link createDiscordAccount}. */
export interface DiscordAccountOptions {
  accountId: string;
  token: string;
  /** REST overrides (e.g. `api` for a proxy or a test fake). */
  rest?: Partial<RESTOptions>;
  /** Replaces the gateway URL Discord returns from `GET /gateway/bot`. */
  gatewayUrl?: string;
  log: Logger;
  onMessage(message: Message): void;
  onInteraction(interaction: ChatInputCommandInteraction): void;
  /** Called for every guild available at start and every guild joined later. */
  onGuild(guild: Guild): void;
  /**
   * The runtime's lease (`ChannelContext.lease`): the gateway connection is opened only while this
   * instance holds `discord:<token digest>`, so several instances never run one bot twice.
   */
  lease?: ChannelContext['lease'];
  /** Stops waiting for the lease (the runtime's shutdown). */
  signal?: AbortSignal;
}

/** One connected bot account. */
export interface DiscordAccount {
  readonly accountId: string;
  readonly client: Client;
  /** The bot's user id (known once started). */
  readonly botUserId: string;
  /** The bot's application id (known once started). */
  readonly applicationId: string;
  status(): { state: AccountState; detail?: string };
  /** Logs in and resolves once the gateway is ready and the guilds are loaded. */
  start(): Promise<void>;
  /** Closes the gateway and the REST queue. Idempotent. */
  stop(): Promise<void>;
}

/**
 * Creates one bot account on a discord.js {@link Client}: intents, DM partials, status tracking
 * from shard events, and reconnect/resume left to discord.js.
 *
 * @param options - token, overrides and event handlers
 */
export function createDiscordAccount(options: DiscordAccountOptions): DiscordAccount {
  const log = options.log;
  const rest: Partial<RESTOptions> = { ...options.rest };
  if (options.gatewayUrl !== undefined)
    rest.makeRequest = withGatewayUrl(options.gatewayUrl, rest.makeRequest);
  const client = new Client({
    intents: [...DISCORD_INTENTS],
    // DM channels are not cached until they are seen: without this partial DMs never arrive.
    partials: [Partials.Channel],
    rest,
  });

  let state: AccountState = 'starting';
  let detail: string | undefined;
  let stopped = false;
  const set = (next: AccountState, why?: string): void => {
    if (stopped) return;
    if (next !== state) log.info({ state: next, detail: why }, 'discord account state');
    state = next;
    detail = why;
  };

  client.on(Events.ShardReady, () => set('connected'));
  client.on(Events.ShardResume, (_id, replayed) => set('connected', `resumed, ${replayed} events replayed`));
  client.on(Events.ShardReconnecting, () => set('reconnecting'));
  client.on(Events.ShardDisconnect, (event) => set('disconnected', `gateway closed with code ${event.code}`));
  client.on(Events.ShardError, (error) => {
    detail = error.message;
    log.warn({ err: error }, 'discord gateway error');
  });
  client.on(Events.Error, (error) => log.error({ err: error }, 'discord client error'));
  client.on(Events.Warn, (message) => log.warn(message));
  client.rest.on('rateLimited', (info) =>
    log.debug(
      { route: info.route, retryAfter: info.retryAfter, global: info.global },
      'discord rate limited',
    ),
  );
  client.on(Events.MessageCreate, (message) => options.onMessage(message));
  client.on(Events.InteractionCreate, (interaction) => {
    if (interaction.isChatInputCommand()) options.onInteraction(interaction);
  });
  // Emitted only for guilds joined after start; start() handles the guilds present at login.
  client.on(Events.GuildCreate, (guild) => options.onGuild(guild));

  let lease: ChannelLease | undefined;

  async function login(): Promise<void> {
    const ready = once(client, Events.ClientReady);
    try {
      await client.login(options.token);
      await ready;
    } catch (error) {
      ready.catch(() => {});
      await client.destroy().catch(() => {});
      throw loginError(options.accountId, error, set);
    }
    set('connected');
    for (const guild of client.guilds.cache.values()) options.onGuild(guild);
  }

  /** While the lease holds, the connection stays; when it is lost, it closes and waits again. */
  async function holdLease(
    name: string,
    held: ChannelLease,
    acquire: NonNullable<DiscordAccountOptions['lease']>,
  ): Promise<void> {
    for (let current = held; !stopped; ) {
      await new Promise<void>((resolve) =>
        current.lost.addEventListener('abort', () => resolve(), { once: true }),
      );
      if (stopped) return;
      log.warn({ lease: name }, 'discord: the lease was lost; closing the gateway connection');
      await client.destroy().catch(() => {});
      set('standby', 'lost the lease; waiting for it again');
      current = await acquire(name, options.signal);
      lease = current;
      if (stopped) return;
      await login();
    }
  }

  return {
    accountId: options.accountId,
    client,
    get botUserId() {
      return client.user?.id ?? '';
    },
    get applicationId() {
      return client.application?.id ?? '';
    },
    status: () => (detail === undefined ? { state } : { state, detail }),
    async start() {
      if (!options.lease) return login();
      const name = `discord:${createHash('sha256').update(options.token).digest('hex').slice(0, 16)}`;
      const pending = options.lease(name, options.signal);
      // Granted at once (alone, or the first instance): log in now, and fail start() as before.
      const first = await Promise.race([pending, delay(LEASE_WAIT_MS)]);
      if (first) {
        lease = first;
        await login();
        void holdLease(name, first, options.lease);
        return;
      }
      set('standby', 'waiting for the lease: another instance holds this Discord connection');
      void pending
        .then(async (granted) => {
          lease = granted;
          await login();
          await holdLease(name, granted, options.lease!);
        })
        .catch((error: unknown) => {
          if (!stopped) log.error({ err: error }, 'discord: could not connect after taking the lease over');
        });
    },
    async stop() {
      if (stopped) return;
      // A failed login keeps its reason (logged-out, error) for `colloquy status`.
      if (state !== 'logged-out' && state !== 'error') set('disconnected', 'stopped');
      stopped = true;
      await client.destroy();
      await lease?.release();
    },
  };
}

/** How long start() waits for the lease before reporting `standby`. */
const LEASE_WAIT_MS = 1_000;

function delay(ms: number): Promise<undefined> {
  return new Promise((resolve) => setTimeout(() => resolve(undefined), ms).unref());
}

function loginError(
  accountId: string,
  error: unknown,
  set: (state: AccountState, detail?: string) => void,
): ColloquyError {
  const code = typeof error === 'object' && error !== null && 'code' in error ? error.code : undefined;
  const message = error instanceof Error ? error.message : String(error);
  if (code === DiscordjsErrorCodes.TokenInvalid || code === DiscordjsErrorCodes.TokenMissing) {
    set('logged-out', 'invalid token');
    return new ColloquyError(
      'UNAUTHORIZED',
      `Discord rejected the token of account "${accountId}". Reset it in the Developer Portal (Bot > Reset Token) ` +
        'and update channels.discord.accounts.',
      { accountId },
      { cause: error },
    );
  }
  set('error', message);
  const hint = /disallowed intents/i.test(message)
    ? ' Enable the Message Content intent in the Developer Portal (Bot > Privileged Gateway Intents).'
    : '';
  return new ColloquyError(
    'CHANNEL_ERROR',
    `Discord account "${accountId}" could not connect: ${message}.${hint}`,
    { accountId },
    { cause: error },
  );
}

/**
 * Wraps the REST strategy so `GET /gateway/bot` reports `gatewayUrl` instead of Discord's gateway.
 * Resumes still use the `resume_gateway_url` of the READY event.
 */
function withGatewayUrl(gatewayUrl: string, inner?: RESTOptions['makeRequest']): RESTOptions['makeRequest'] {
  const makeRequest = inner ?? DefaultRestOptions.makeRequest;
  return async (url, init): Promise<ResponseLike> => {
    const response = await makeRequest(url, init);
    if (!response.ok || !new URL(url).pathname.endsWith('/gateway/bot')) return response;
    const info = (await response.json()) as Record<string, unknown>;
    return new Response(JSON.stringify({ ...info, url: gatewayUrl }), {
      status: response.status,
      headers: { 'content-type': 'application/json' },
    });
  };
}
