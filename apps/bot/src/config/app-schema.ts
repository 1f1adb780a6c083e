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
    diskReserveBytes: Type.Integer({
      minimum: 0,
      default: 16 * 1024 * 1024,
      description:
        'SQLite only: the size of the reserve file kept beside the database (colloquy.db.reserve), deleted when the disk fills so that the writes under way still fit, and written back before writes resume. 0 keeps none.',
    }),
    diskMinFreeBytes: Type.Integer({
      minimum: 0,
      default: 4 * 1024 * 1024,
      description:
        "SQLite only: below this many free bytes on the database's disk, new messages are refused (and `colloquy status` and the web chat's /healthz say so) until space is freed; then the bot resumes by itself.",
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

/** The `telemetry` section: OpenTelemetry traces and metrics exported over OTLP/HTTP (docs/telemetry.md). */
export const TelemetrySectionSchema = Type.Object(
  {
    enabled: Type.Optional(
      Type.Boolean({
        description:
          'Export traces and metrics. Unset: on when OTEL_EXPORTER_OTLP_ENDPOINT (or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT / _METRICS_ENDPOINT) is set. OTEL_SDK_DISABLED=true turns it off.',
      }),
    ),
    endpoint: Type.Optional(
      Type.String({
        pattern: '^https?://',
        'x-expected': 'an http:// or https:// URL of an OTLP/HTTP receiver',
        description:
          'The OTLP/HTTP base URL, e.g. "http://127.0.0.1:4318" (/v1/traces and /v1/metrics are added). Unset: OTEL_EXPORTER_OTLP_ENDPOINT, else http://localhost:4318.',
      }),
    ),
    serviceName: Type.Optional(
      Type.String({
        minLength: 1,
        description: 'service.name of the exports. Unset: OTEL_SERVICE_NAME, else "colloquy".',
      }),
    ),
    sampleRatio: Type.Number({
      minimum: 0,
      maximum: 1,
      default: 1,
      description: 'The share of new traces kept; a spawn tree is kept or dropped whole.',
    }),
    metricIntervalSeconds: Type.Integer({
      minimum: 1,
      maximum: 3600,
      default: 60,
      description: 'How often metrics are exported.',
    }),
    recordContent: Type.Boolean({
      default: false,
      description:
        'Record prompts, answers, tool arguments and results on spans, with secrets redacted as in sessions_history output.',
    }),
    traceTree: Type.Union([Type.Literal('tree'), Type.Literal('run')], {
      default: 'tree',
      description:
        '"tree": one trace per spawn tree. "run": a trace per run, linked, sharing colloquy.tree.id (for trees that run for hours).',
    }),
  },
  { ...Strict, default: {} },
);

/** The resolved `telemetry` section. */
export type TelemetrySection = Static<typeof TelemetrySectionSchema>;

/** The resolved `channels.webchat` section (the web chat plugin's `WebChatConfig`). */
export type { WebChatConfig as WebChatSection } from '@colloquy/plugin-webchat';
/**
 * The `channels.webchat` section: the web chat plugin's own schema (`WebChatConfigSchema`), under the
 * name this app has always exported.
 */
export { WebChatConfigSchema as WebChatSectionSchema } from '@colloquy/plugin-webchat';
