import { type ConfigIssue, resolveSection } from '@colloquy/core';
import { type Static, Type } from '@sinclair/typebox';

/** Per-group settings, keyed by group JID (`<id>@g.us`) or `*` for every group. */
export const WhatsAppGroupConfigSchema = Type.Object(
  {
    /** Answer only when the bot is mentioned or replied to. Default: `requireMentionByDefault`. */
    requireMention: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);

/**
 * The `channels.whatsapp` section of the Colloquy config (TypeBox, so it is also JSON Schema).
 * Every field has a default; see {@link resolveWhatsAppConfig}.
 */
export const WhatsAppConfigSchema = Type.Object(
  {
    /** Start the WhatsApp channel. Default `true` once the section exists. */
    enabled: Type.Boolean({ default: true }),
    /** Where credentials, the LID map and pairings live. Default: the app's state dir + `/whatsapp`. */
    stateDir: Type.Optional(Type.String({ minLength: 1 })),
    /** Who may talk to the bot in direct chats. Default `pairing`. */
    dmPolicy: Type.Union([Type.Literal('open'), Type.Literal('allowlist'), Type.Literal('pairing')], {
      default: 'pairing',
    }),
    /** Phone numbers (`+15551234567`, `15551234567`) or JIDs always allowed in direct chats. */
    allowFrom: Type.Array(Type.String({ minLength: 1 }), { default: [] }),
    /** Answer only in the owner's own "message yourself" chat. Default `false`. */
    selfChatMode: Type.Boolean({ default: false }),
    /** Per-group settings by group JID; `*` applies to every group not listed. */
    groups: Type.Record(Type.String(), WhatsAppGroupConfigSchema, { default: {} }),
    /** Groups answer only when the bot is mentioned unless the group says otherwise. Default `true`. */
    requireMentionByDefault: Type.Boolean({ default: true }),
    /** Replies longer than this are split into several messages. Default `4000`. */
    chunkLength: Type.Integer({ minimum: 200, maximum: 65_536, default: 4000 }),
    /** Mark answered messages as read (blue ticks). Default `false`. */
    readReceipts: Type.Boolean({ default: false }),
    /**
     * Images, voice notes, audio and documents addressed to the bot are downloaded into
     * `<stateDir>/media/` up to this size; larger ones are only described. `0` downloads nothing.
     * Default 20 MB (20971520).
     */
    maxMediaBytes: Type.Integer({ minimum: 0, default: 20 * 1024 * 1024 }),
    /**
     * The WhatsApp Web WebSocket endpoint (`ws://` or `wss://`), passed to Baileys as
     * `waWebSocketUrl`. Default: Baileys' own, `wss://web.whatsapp.com/ws/chat`. Set it for a proxy,
     * or for a local fake in tests and benches.
     */
    webSocketUrl: Type.Optional(
      Type.String({
        pattern: '^wss?://[^\\s/?#]+([/?#]\\S*)?$',
        description:
          "WhatsApp Web WebSocket URL (ws:// or wss://) used instead of Baileys' default wss://web.whatsapp.com/ws/chat (a proxy or a local fake).",
      }),
    ),
  },
  { additionalProperties: false },
);

/** The resolved `channels.whatsapp` config, defaults applied. */
export type WhatsAppConfig = Static<typeof WhatsAppConfigSchema>;

/** The config as written by users: every field optional. */
export type WhatsAppConfigInput = Partial<WhatsAppConfig>;

/**
 * One problem found in a config section (for an unknown setting also the settings `allowed` there
 * and a `suggestion`). Core's `ConfigIssue`.
 */
export type WhatsAppConfigIssue = ConfigIssue;

/**
 * Validates the `channels.whatsapp` config section and fills in defaults.
 *
 * @param section - the raw section (JSON5-parsed), or `undefined` for all defaults
 * @returns the resolved config
 * @throws ColloquyError `CONFIG_INVALID` with `details.issues: { path, expected, got }[]`, paths
 *   spelled from the config root (`channels.whatsapp.dmPolicy`)
 * @example
 * ```ts
 * const whatsapp = resolveWhatsAppConfig({ dmPolicy: 'allowlist', allowFrom: ['+15551234567'] });
 * whatsapp.chunkLength; // 4000
 * ```
 */
export function resolveWhatsAppConfig(section: unknown): WhatsAppConfig {
  return resolveSection(WhatsAppConfigSchema, section, { path: 'channels.whatsapp', label: 'WhatsApp' });
}
