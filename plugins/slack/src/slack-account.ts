import { createHash } from 'node:crypto';
import type { Server } from 'node:http';
import type { ChannelContext, ChannelLease, Logger } from '@colloquy/core';
import { App, HTTPReceiver, LogLevel, SocketModeReceiver, webApi } from '@slack/bolt';
import type { SlackAccountSecrets, SlackConfig } from './config.js';

/** The state of one account, for `colloquy status`. */
export type AccountState = 'starting' | 'connected' | 'standby' | 'reconnecting' | 'disconnected' | 'error';

/** Options of {@link createSlackAccount}. */
export interface SlackAccountOptions {
  accountId: string;
  secrets: SlackAccountSecrets;
  /** `mode` and `http` of the section. */
  config: Pick<SlackConfig, 'mode' | 'http'>;
  /** The Web API root (ends with `/`); default Slack's. */
  apiUrl?: string;
  log: Logger;
  /** Registers the app's listeners (messages, commands) on the Bolt app before it connects. */
  listen(app: App): void;
  /**
   * The runtime's lease: in Socket Mode the connection is opened only while this instance holds
   * `slack:<app token digest>`, so a cluster runs one connection per app and each event is handled once.
   */
  lease?: ChannelContext['lease'];
  /** Stops waiting for the lease (the runtime's shutdown). */
  signal?: AbortSignal;
}

/** One Slack app, connected through Bolt. */
export interface SlackAccount {
  readonly accountId: string;
  /** The Bolt app (its `client` is the Web API client). */
  readonly app: App;
  /**
   * The Web API client for sends: it neither tries a failing call again nor waits out a 429 (it
   * rejects it), so the plugin decides (see `send-failures.ts`). Bolt's own client would hold a
   * send through a Slack outage for about 30 minutes, out of the runtime's delivery outbox.
   */
  readonly sendClient: webApi.WebClient;
  /** The bot's user id, known once `start` resolved (from `auth.test`). */
  readonly botUserId: string;
  start(): Promise<void>;
  stop(): Promise<void>;
  status(): { state: AccountState; detail?: string };
}

/** How long start() waits for the lease before reporting `standby`. */
const LEASE_WAIT_MS = 1_000;

/**
 * Creates one account: a Bolt app on a Socket Mode receiver (an outbound WebSocket) or an HTTP
 * receiver (Slack posts signed events). Bolt's Web API client waits out 429s (`Retry-After`) and
 * retries; sends go through `sendClient`, which does neither.
 */
export function createSlackAccount(options: SlackAccountOptions): SlackAccount {
  const { log, secrets } = options;
  const clientOptions = options.apiUrl !== undefined ? { slackApiUrl: options.apiUrl } : {};
  const logger = boltLogger(log);
  let state: AccountState = 'starting';
  let detail: string | undefined;
  let stopped = false;
  let lease: ChannelLease | undefined;
  let botUserId = '';
  const set = (next: AccountState, why?: string): void => {
    state = next;
    detail = why;
  };

  const socket =
    options.config.mode === 'socket'
      ? new SocketModeReceiver({
          appToken: secrets.appToken ?? '',
          logger,
          installerOptions: { clientOptions },
        })
      : undefined;
  const receiver =
    socket ??
    new HTTPReceiver({
      signingSecret: secrets.signingSecret ?? '',
      endpoints: options.config.http.path,
      logger,
    });
  const app = new App({
    token: secrets.botToken,
    receiver,
    logger,
    clientOptions,
    deferInitialization: true,
  });
  if (socket !== undefined) {
    socket.client.on('connected', () => set('connected'));
    socket.client.on('reconnecting', () => {
      if (!stopped) set('reconnecting', 'Slack closed the connection; reconnecting');
    });
    socket.client.on('disconnected', () => {
      if (!stopped) set('disconnected');
    });
  }
  options.listen(app);
  const sendClient = new webApi.WebClient(secrets.botToken, {
    ...clientOptions,
    logger,
    retryConfig: { retries: 0 },
    rejectRateLimitedCalls: true,
  });

  async function connect(): Promise<void> {
    try {
      await app.init();
      const auth = await app.client.auth.test();
      botUserId = auth.user_id ?? '';
      if (socket !== undefined) await app.start();
      else {
        const server = (await app.start({
          port: options.config.http.port,
          host: options.config.http.host,
        })) as Server;
        log.info({ address: server.address() }, 'slack events served over HTTP');
      }
      set('connected');
    } catch (error) {
      set('error', error instanceof Error ? error.message : String(error));
      throw error;
    }
  }

  /** While the lease holds, the connection stays; when it is lost, it closes and waits again. */
  async function holdLease(
    name: string,
    held: ChannelLease,
    acquire: NonNullable<SlackAccountOptions['lease']>,
  ) {
    for (let current = held; !stopped; ) {
      await new Promise<void>((resolve) =>
        current.lost.addEventListener('abort', () => resolve(), { once: true }),
      );
      if (stopped) return;
      log.warn({ lease: name }, 'slack: the lease was lost; closing the Socket Mode connection');
      await app.stop().catch(() => {});
      set('standby', 'lost the lease; waiting for it again');
      current = await acquire(name, options.signal);
      lease = current;
      if (stopped) return;
      await connect();
    }
  }

  return {
    accountId: options.accountId,
    app,
    sendClient,
    get botUserId() {
      return botUserId;
    },
    async start() {
      // HTTP events can reach every instance; only a Socket Mode connection is held by one.
      if (options.lease === undefined || socket === undefined) return connect();
      const name = `slack:${createHash('sha256')
        .update(secrets.appToken ?? '')
        .digest('hex')
        .slice(0, 16)}`;
      const pending = options.lease(name, options.signal);
      const first = await Promise.race([pending, delay(LEASE_WAIT_MS)]);
      if (first !== undefined) {
        lease = first;
        await connect();
        void holdLease(name, first, options.lease);
        return;
      }
      set('standby', 'waiting for the lease: another instance holds this Slack connection');
      void pending
        .then(async (granted) => {
          lease = granted;
          if (stopped) return;
          await connect();
          await holdLease(name, granted, options.lease!);
        })
        .catch((error: unknown) => {
          if (!stopped) log.error({ err: error }, 'slack: could not connect after taking the lease over');
        });
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      if (state !== 'error') set('disconnected', 'stopped');
      await app.stop().catch((error: unknown) => log.debug({ err: error }, 'slack: stop failed'));
      await lease?.release();
    },
    status: () => (detail === undefined ? { state } : { state, detail }),
  };
}

function delay(ms: number): Promise<undefined> {
  return new Promise((resolve) => setTimeout(() => resolve(undefined), ms).unref());
}

/** Bolt's logger interface over the plugin's logger (Bolt's lines carry `slack: <name>`). */
function boltLogger(log: Logger) {
  let name = 'bolt';
  let level = LogLevel.INFO;
  const line =
    (write: Logger['info']) =>
    (...parts: unknown[]) =>
      write({ slack: name }, parts.map((part) => (typeof part === 'string' ? part : String(part))).join(' '));
  return {
    debug: line(log.debug.bind(log)),
    info: line(log.info.bind(log)),
    warn: line(log.warn.bind(log)),
    error: line(log.error.bind(log)),
    setLevel: (next: LogLevel) => {
      level = next;
    },
    getLevel: () => level,
    setName: (next: string) => {
      name = next;
    },
  };
}
