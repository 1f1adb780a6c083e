/**
 * The parts of the config file the app owns: the `app` section (state dir, owners, logging) and
 * `channels.webchat` (the web chat's listening address and look; its secrets live in the state dir).
 */
import { type Static, Type } from '@sinclair/typebox';

const Strict = { additionalProperties: false } as const;

/** The `app` section. */
export const AppSectionSchema = Type.Object(
  {
    stateDir: Type.Optional(
      Type.String({ minLength: 1, description: 'Where the database, tokens and channel state live.' }),
    ),
    owners: Type.Object(
      {
        webchat: Type.Optional(Type.Array(Type.String({ minLength: 1 }))),
        telegram: Type.Optional(Type.Array(Type.String({ minLength: 1 }))),
        discord: Type.Optional(Type.Array(Type.String({ minLength: 1 }))),
        whatsapp: Type.Optional(Type.Array(Type.String({ minLength: 1 }))),
      },
      { ...Strict, default: {} },
    ),
    logLevel: Type.Union(
      [
        Type.Literal('trace'),
        Type.Literal('debug'),
        Type.Literal('info'),
        Type.Literal('warn'),
        Type.Literal('error'),
        Type.Literal('silent'),
      ],
      { default: 'info' },
    ),
  },
  { ...Strict, default: {} },
);

/** The resolved `app` section. */
export type AppSection = Static<typeof AppSectionSchema>;

/** The `storage` section: where sessions, transcripts and runs are kept. */
export const StorageSectionSchema = Type.Object(
  {
    url: Type.Optional(
      Type.String({
        pattern: '^postgres(ql)?://',
        description:
          'A PostgreSQL connection URL (postgres://user:password@host:5432/db). Unset: SQLite in the state directory.',
      }),
    ),
  },
  { ...Strict, default: {} },
);

/** The resolved `storage` section. */
export type StorageSection = Static<typeof StorageSectionSchema>;

/** A token bucket: `burst` actions at once, refilled at `perSecond`. */
const TokenBucketSchema = Type.Object(
  { burst: Type.Integer({ minimum: 1 }), perSecond: Type.Number({ exclusiveMinimum: 0 }) },
  Strict,
);

/** The `channels.webchat` section. */
export const WebChatSectionSchema = Type.Object(
  {
    enabled: Type.Boolean({ default: true }),
    host: Type.String({ minLength: 1, default: '127.0.0.1' }),
    port: Type.Integer({ minimum: 0, maximum: 65_535, default: 7420 }),
    title: Type.Optional(Type.String({ minLength: 1, maxLength: 80 })),
    assistantName: Type.Optional(Type.String({ minLength: 1, maxLength: 40 })),
    maxMessageChars: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000 })),
    historyLimit: Type.Optional(Type.Integer({ minimum: 0, maximum: 500 })),
    rateLimit: Type.Optional(TokenBucketSchema),
    secureCookies: Type.Optional(Type.Boolean()),
    allowedHosts: Type.Optional(Type.Array(Type.String({ minLength: 1 }))),
    maxSockets: Type.Optional(Type.Integer({ minimum: 2, maximum: 1_000_000 })),
    maxSocketsPerAddress: Type.Optional(Type.Integer({ minimum: 1 })),
    newVisitorsPerMinute: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000 })),
    addressRateLimit: Type.Optional(TokenBucketSchema),
    idleSocketMs: Type.Optional(Type.Integer({ minimum: 0, maximum: 86_400_000 })),
    trustedProxies: Type.Optional(Type.Array(Type.String({ minLength: 1 }))),
  },
  { ...Strict, default: {} },
);

/** The resolved `channels.webchat` section. */
export type WebChatSection = Static<typeof WebChatSectionSchema>;
