/**
 * The Colloquy config schema: one TypeBox schema describing the fully resolved config, with a
 * `default` on every optional-with-default setting so `resolveConfig` can fill gaps.
 *
 * Schema options named `x-expected` hold the human wording used in `CONFIG_INVALID` issues.
 */
import { type Static, Type } from '@sinclair/typebox';

// --- shared pieces ---

/** Lower-case identifier: agent ids and the main key. Keys use `:` as separator, so it is excluded. */
const ID_PATTERN = '^[a-z0-9][a-z0-9_-]{0,63}$';
const ID_EXPECTED = 'an id of lower-case letters, digits, "-" or "_" (at most 64 characters)';

const AgentId = Type.String({ pattern: ID_PATTERN, 'x-expected': ID_EXPECTED });
const AgentIdOrStar = Type.String({
  pattern: '^(\\*|[a-z0-9][a-z0-9_-]{0,63})$',
  'x-expected': `"*" or ${ID_EXPECTED}`,
});
const ModelRef = Type.String({
  pattern: '^[^/\\s]+/\\S+$',
  'x-expected': 'a model reference "provider/model", e.g. "openai/gpt-4o-mini"',
});
const NonEmpty = Type.String({ minLength: 1 });
const ToolPattern = Type.String({
  pattern: '^[A-Za-z0-9_*-]{1,128}$',
  'x-expected': 'a tool name or a pattern with "*" (letters, digits, "_", "-"), e.g. "github__*"',
});
const Int = (minimum: number, maximum: number | undefined, defaultValue: number) =>
  Type.Integer(
    maximum === undefined ? { minimum, default: defaultValue } : { minimum, maximum, default: defaultValue },
  );
const Strict = { additionalProperties: false } as const;

// --- session ---

const SendPolicyAction = Type.Union([Type.Literal('allow'), Type.Literal('deny')]);

/** One send-policy rule: every field of `match` that is set must match the target. */
export const SendPolicyRuleSchema = Type.Object(
  {
    match: Type.Object(
      {
        channel: Type.Optional(NonEmpty),
        chatType: Type.Optional(
          Type.Union([Type.Literal('direct'), Type.Literal('group'), Type.Literal('channel')]),
        ),
        keyPrefix: Type.Optional(NonEmpty),
      },
      Strict,
    ),
    action: SendPolicyAction,
  },
  Strict,
);

/** `session.sendPolicy`: ordered rules plus a default action. */
export const SendPolicyConfigSchema = Type.Object(
  {
    rules: Type.Array(SendPolicyRuleSchema, { default: [] }),
    default: Type.Union([Type.Literal('allow'), Type.Literal('deny')], { default: 'allow' }),
  },
  { ...Strict, default: {} },
);

/** One entry of `session.groupContext.exclude`: every field set must match. */
const GroupContextExcludeSchema = Type.Object(
  {
    channel: Type.Optional(NonEmpty),
    chatId: Type.Optional(NonEmpty),
    keyPrefix: Type.Optional(NonEmpty),
  },
  Strict,
);

/**
 * `session.groupContext`: the runtime keeps the recent group messages that did not address the bot
 * (per group session, in memory) and shows them to the model, marked as not addressed to it, when
 * the bot is addressed in that group.
 */
const GroupContextConfigSchema = Type.Object(
  {
    enabled: Type.Boolean({ default: true }),
    maxMessages: Int(1, 200, 20),
    maxAgeMinutes: Int(1, 10_080, 60),
    /** Longer messages are cut to this many characters in the window. */
    maxCharsPerMessage: Int(16, 10_000, 1000),
    /** Groups kept out of the window (their messages are dropped as before). */
    exclude: Type.Array(GroupContextExcludeSchema, { default: [] }),
  },
  { ...Strict, default: {} },
);

const SessionSchema = Type.Object(
  {
    mainKey: Type.String({ pattern: ID_PATTERN, 'x-expected': ID_EXPECTED, default: 'main' }),
    scope: Type.Union([Type.Literal('per-sender'), Type.Literal('global')], { default: 'per-sender' }),
    dmScope: Type.Union(
      [
        Type.Literal('per-channel-peer'),
        Type.Literal('per-peer'),
        Type.Literal('per-account-channel-peer'),
        Type.Literal('main'),
      ],
      { default: 'per-channel-peer' },
    ),
    sendPolicy: SendPolicyConfigSchema,
    agentToAgent: Type.Object(
      { maxPingPongTurns: Int(0, 5, 5), maxHops: Int(1, 64, 8) },
      { ...Strict, default: {} },
    ),
    groupContext: GroupContextConfigSchema,
  },
  { ...Strict, default: {} },
);

// --- tools ---

const ToolsSchema = Type.Object(
  {
    sessions: Type.Object(
      {
        visibility: Type.Union(
          [Type.Literal('self'), Type.Literal('tree'), Type.Literal('agent'), Type.Literal('all')],
          { default: 'tree' },
        ),
      },
      { ...Strict, default: {} },
    ),
    agentToAgent: Type.Object(
      {
        enabled: Type.Boolean({ default: false }),
        allow: Type.Array(AgentIdOrStar, { default: [] }),
      },
      { ...Strict, default: {} },
    ),
    sessions_spawn: Type.Object(
      {
        attachments: Type.Object(
          {
            enabled: Type.Boolean({ default: false }),
            maxFiles: Int(1, 1000, 50),
            maxFileBytes: Int(1, undefined, 1_048_576),
            maxTotalBytes: Int(1, undefined, 5_242_880),
            retainOnSessionKeep: Type.Boolean({ default: false }),
          },
          { ...Strict, default: {} },
        ),
      },
      { ...Strict, default: {} },
    ),
    subagents: Type.Object(
      {
        tools: Type.Object(
          { allow: Type.Optional(Type.Array(NonEmpty)), deny: Type.Optional(Type.Array(NonEmpty)) },
          { ...Strict, default: {} },
        ),
      },
      { ...Strict, default: {} },
    ),
  },
  { ...Strict, default: {} },
);

// --- agents ---

/** One entry of `agents.list`. Unset fields fall back to `agents.defaults` (see `agentConfigFor`). */
export const AgentEntrySchema = Type.Object(
  {
    id: AgentId,
    name: Type.Optional(NonEmpty),
    default: Type.Optional(Type.Boolean()),
    model: Type.Optional(ModelRef),
    systemPrompt: Type.Optional(Type.String()),
    sandboxed: Type.Optional(Type.Boolean()),
    subagents: Type.Optional(Type.Object({ allowAgents: Type.Optional(Type.Array(AgentIdOrStar)) }, Strict)),
    /**
     * Extra tools this agent may use beyond the session tools: MCP tools, named `<server>__<tool>`.
     * `allow` lists names or patterns where `*` matches any characters (`github__*`). Default: none.
     */
    tools: Type.Optional(Type.Object({ allow: Type.Optional(Type.Array(ToolPattern)) }, Strict)),
  },
  Strict,
);

const AgentsSchema = Type.Object(
  {
    defaults: Type.Object(
      {
        model: Type.Optional(ModelRef),
        systemPrompt: Type.Optional(Type.String()),
        subagents: Type.Object(
          {
            maxSpawnDepth: Int(0, 10, 1),
            maxChildrenPerAgent: Int(1, 1000, 5),
            runTimeoutSeconds: Int(0, undefined, 0),
            archiveAfterMinutes: Int(0, undefined, 60),
          },
          { ...Strict, default: {} },
        ),
        sandbox: Type.Object(
          {
            enabled: Type.Boolean({ default: false }),
            sessionToolsVisibility: Type.Union([Type.Literal('spawned'), Type.Literal('all')], {
              default: 'spawned',
            }),
          },
          { ...Strict, default: {} },
        ),
      },
      { ...Strict, default: {} },
    ),
    list: Type.Array(AgentEntrySchema, { minItems: 1, default: [{ id: 'main', default: true }] }),
  },
  { ...Strict, default: {} },
);

// --- models ---

/**
 * What the runtime lets through to one provider (`models.providers.<id>.limits`). Unset fields take the
 * runtime's defaults: `concurrency` 256 model calls in flight, `requestsPerMinute` and `tokensPerMinute`
 * unlimited. Calls over a limit wait (honouring the run's abort signal); they are not refused.
 */
export const ModelProviderLimitsSchema = Type.Object(
  {
    /** Model calls (HTTP streams) in flight at once to this provider, across all lanes and agents. */
    concurrency: Type.Optional(Type.Integer({ minimum: 1, maximum: 100_000 })),
    /** Requests started per minute (a token bucket holding one second's worth, at least 1). */
    requestsPerMinute: Type.Optional(Type.Integer({ minimum: 1 })),
    /** Prompt tokens (estimated) plus reported output tokens per minute. */
    tokensPerMinute: Type.Optional(Type.Integer({ minimum: 1 })),
  },
  Strict,
);

/**
 * How long the runtime waits for one provider (`models.providers.<id>.timeouts`), per attempt. Unset
 * fields take the runtime's defaults: `idleMs` 120000 (or the `idleTimeoutMs` option), `firstByteMs`
 * the idle timeout, `totalMs` 600000. A call over any of them fails with `TIMEOUT`.
 */
export const ModelProviderTimeoutsSchema = Type.Object(
  {
    /** The longest silence between two parts of the response. */
    idleMs: Type.Optional(Type.Integer({ minimum: 1 })),
    /** The longest wait from sending the request to the first part of the response. */
    firstByteMs: Type.Optional(Type.Integer({ minimum: 1 })),
    /** The longest a whole call may take, from sending the request to its last part. */
    totalMs: Type.Optional(Type.Integer({ minimum: 1 })),
  },
  Strict,
);

/**
 * When the runtime stops calling a provider that is down (`models.providers.<id>.circuitBreaker`).
 * After `failureThreshold` failures in a row (timeouts, 5xx, refused connections; not 4xx or content
 * errors) calls fail at once for `coolDownMs`; then one call probes, and a success closes the circuit.
 * Defaults: 5 failures, 30000 ms.
 */
export const ModelProviderCircuitBreakerSchema = Type.Object(
  {
    /** Consecutive provider failures that open the circuit. */
    failureThreshold: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })),
    /** How long an open circuit refuses calls before one probe is let through. */
    coolDownMs: Type.Optional(Type.Integer({ minimum: 1 })),
  },
  Strict,
);

/** One model provider. */
export const ModelProviderConfigSchema = Type.Object(
  {
    kind: Type.Union([Type.Literal('openai-compatible'), Type.Literal('anthropic')]),
    baseURL: Type.Optional(NonEmpty),
    apiKey: Type.Optional(NonEmpty),
    apiKeyEnv: Type.Optional(NonEmpty),
    limits: Type.Optional(ModelProviderLimitsSchema),
    timeouts: Type.Optional(ModelProviderTimeoutsSchema),
    circuitBreaker: Type.Optional(ModelProviderCircuitBreakerSchema),
  },
  Strict,
);

/** Prices of one model in US dollars per million tokens. */
export const ModelPriceSchema = Type.Object(
  {
    inputPerMTokUsd: Type.Number({ minimum: 0 }),
    outputPerMTokUsd: Type.Number({ minimum: 0 }),
  },
  Strict,
);

const ModelsSchema = Type.Object(
  {
    providers: Type.Record(Type.String(), ModelProviderConfigSchema, { default: {} }),
    prices: Type.Record(Type.String(), ModelPriceSchema, { default: {} }),
    contextWindowTokens: Int(1, undefined, 128_000),
  },
  { ...Strict, default: {} },
);

// --- runtime, gateway, redaction, channels ---

const RuntimeSchema = Type.Object(
  {
    /**
     * Turns running at once per lane on this instance (each session still runs one at a time).
     * A turn mostly waits for the model, so the defaults (256 main, 64 sub-agent, 8 cron) are high;
     * what bounds them is each provider's `models.providers.<id>.limits` and memory (a few hundred
     * KiB per short turn). With `@colloquy/cluster` on PostgreSQL each lane is that many
     * graphile-worker workers per instance; idle ones cost next to nothing (one query a second per
     * instance finds the jobs that need waking).
     */
    lanes: Type.Object(
      { main: Int(1, 1024, 256), subagent: Int(1, 1024, 64), cron: Int(1, 1024, 8) },
      { ...Strict, default: {} },
    ),
    maxSteps: Int(1, 1000, 8),
    staleRunMinutes: Int(1, undefined, 10),
    maxRunAttempts: Int(1, 100, 3),
    /**
     * The most chat messages (runs) of one session that may wait, queued or running: a message over it is
     * stored, as a run that ends at once, but queues no turn, and the chat is told once that the bot is busy.
     */
    maxQueuedPerSession: Int(1, 100_000, 50),
    shutdownDrainMs: Int(0, undefined, 5000),
    /**
     * Replies a chat platform could not take for now (a 5xx, a rate limit, a refused or reset
     * connection, a timeout) stay in the delivery outbox and are sent again: after `firstDelayMs`
     * (1 s), doubling up to `maxDelayMs` (15 s), until `maxAgeMinutes` (15) after the reply was
     * due, when it is recorded `failed`. A chat's later replies wait behind its earlier ones;
     * other chats are not held up. Final refusals (the chat is gone, the bot was blocked) are
     * not retried.
     */
    deliveryRetry: Type.Object(
      {
        firstDelayMs: Int(1, undefined, 1000),
        maxDelayMs: Int(1, undefined, 15_000),
        maxAgeMinutes: Int(1, undefined, 15),
      },
      { ...Strict, default: {} },
    ),
    /** Memory cap of the in-memory prompt-history cache, in MiB (least recently used sessions go first; 0 = no cache). */
    historyCacheMiB: Int(0, undefined, 64),
  },
  { ...Strict, default: {} },
);

const GatewayMcpSchema = Type.Object(
  {
    /** Serve MCP (Streamable HTTP) at `/mcp` on the gateway's port. Clients need a token from `colloquy mcp token create`. */
    enabled: Type.Boolean({ default: true }),
    /** Host names a request's `Host` header may carry (DNS-rebinding protection). Default: localhost names. */
    allowedHosts: Type.Array(NonEmpty, { default: ['localhost', '127.0.0.1', '[::1]'] }),
    /** Origin host names a browser request may come from (requests without `Origin` pass). Default: localhost names. */
    allowedOrigins: Type.Array(NonEmpty, { default: ['localhost', '127.0.0.1', '[::1]'] }),
  },
  { ...Strict, default: {} },
);

const GatewaySchema = Type.Object(
  {
    host: Type.String({ minLength: 1, default: '127.0.0.1' }),
    port: Int(0, 65_535, 7421),
    token: Type.Optional(NonEmpty),
    mcp: GatewayMcpSchema,
  },
  { ...Strict, default: {} },
);

const RedactionSchema = Type.Object(
  {
    secrets: Type.Array(
      Type.String({
        minLength: 6,
        'x-expected': 'a secret of at least 6 characters (shorter values would redact ordinary text)',
      }),
      { default: [] },
    ),
  },
  { ...Strict, default: {} },
);

// --- the whole config ---

/**
 * The TypeBox schema of the fully resolved Colloquy config. Every setting with a default carries it,
 * so `Value.Default` (used by `resolveConfig`) fills gaps; unknown keys are refused everywhere except
 * in `channels` (each plugin validates its own section) and the `models.providers` / `models.prices`
 * maps. Use it as JSON Schema for editors, or call `resolveConfig` to load a config.
 */
export const ColloquyConfigSchema = Type.Object(
  {
    session: SessionSchema,
    tools: ToolsSchema,
    agents: AgentsSchema,
    models: ModelsSchema,
    runtime: RuntimeSchema,
    gateway: GatewaySchema,
    redaction: RedactionSchema,
    channels: Type.Record(Type.String(), Type.Unknown(), { default: {} }),
  },
  { ...Strict, default: {} },
);

/** The fully resolved config: every setting with a default is present. Produced by `resolveConfig`. */
export type ColloquyConfig = Static<typeof ColloquyConfigSchema>;

/** `session.sendPolicy`: ordered rules and a default action. */
export type SendPolicyConfig = Static<typeof SendPolicyConfigSchema>;

/** One rule of `session.sendPolicy.rules`. */
export type SendPolicyRule = Static<typeof SendPolicyRuleSchema>;

/** One entry of `agents.list`. */
export type AgentEntry = Static<typeof AgentEntrySchema>;

/** One entry of `models.providers`. */
export type ModelProviderConfig = Static<typeof ModelProviderConfigSchema>;

/** `models.providers.<id>.limits`. */
export type ModelProviderLimits = Static<typeof ModelProviderLimitsSchema>;

/** `models.providers.<id>.timeouts`. */
export type ModelProviderTimeouts = Static<typeof ModelProviderTimeoutsSchema>;

/** `models.providers.<id>.circuitBreaker`. */
export type ModelProviderCircuitBreaker = Static<typeof ModelProviderCircuitBreakerSchema>;

/** One entry of `models.prices`. */
export type ModelPrice = Static<typeof ModelPriceSchema>;

/** `tools.sessions.visibility`. */
export type SessionVisibility = ColloquyConfig['tools']['sessions']['visibility'];

/** `session.dmScope`: how direct chats map to session keys. */
export type DmScope = ColloquyConfig['session']['dmScope'];

/** `session.groupContext`: the window of recent un-addressed group messages shown to the model. */
export type GroupContextConfig = ColloquyConfig['session']['groupContext'];

/** `session.scope`: `global` aliases the reserved key `global` to the main session. */
export type SessionScope = ColloquyConfig['session']['scope'];

type DeepPartial<T> = T extends readonly unknown[]
  ? T
  : T extends object
    ? string extends keyof T
      ? T
      : { [K in keyof T]?: DeepPartial<T[K]> }
    : T;

/**
 * What users write: any subset of `ColloquyConfig` (objects deep-partial; arrays and maps are
 * given whole). `resolveConfig` turns it into a `ColloquyConfig`.
 */
export type ColloquyConfigInput = DeepPartial<ColloquyConfig>;
