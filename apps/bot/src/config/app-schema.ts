/**
 * The parts of the config file the app owns: the `app` section (state dir, owners, logging) and
 * `storage`. `channels.webchat` is the web chat plugin's schema; its secrets live in the state dir.
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
        slack: Type.Optional(Type.Array(Type.String({ minLength: 1 }))),
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
    unreachableAfterSeconds: Type.Integer({
      minimum: 1,
      default: 30,
      description:
        "PostgreSQL only: once this instance has not reached the database for this many seconds, `colloquy status` and the web chat's /healthz say so (turns wait meanwhile, and resume by themselves when it is back).",
    }),
    preparedStatements: Type.Boolean({
      default: true,
      description:
        'PostgreSQL only: prepare the store statements by name on each connection (parsed once). false behind a pooler that cannot keep them (PgBouncer in transaction mode before 1.21).',
    }),
  },
  { ...Strict, default: {} },
);

/** The resolved `storage` section. */
export type StorageSection = Static<typeof StorageSectionSchema>;

/** The resolved `channels.webchat` section (the web chat plugin's `WebChatConfig`). */
export type { WebChatConfig as WebChatSection } from '@colloquy/plugin-webchat';
/**
 * The `channels.webchat` section: the web chat plugin's own schema (`WebChatConfigSchema`), under the
 * name this app has always exported.
 */
export { WebChatConfigSchema as WebChatSectionSchema } from '@colloquy/plugin-webchat';
