import type {
  AuthenticationState,
  BaileysEventMap,
  Contact,
  GroupMetadata,
  UserFacingSocketConfig,
  WAMessage,
  WAMessageKey,
  WAPresence,
} from '@whiskeysockets/baileys';

/** The events of Baileys' emitter that the plugin listens to. */
export type WhatsAppEventMap = Pick<
  BaileysEventMap,
  | 'connection.update'
  | 'creds.update'
  | 'messages.upsert'
  | 'contacts.upsert'
  | 'contacts.update'
  | 'lid-mapping.update'
  | 'groups.upsert'
  | 'groups.update'
  | 'group-participants.update'
>;

/** The event emitter surface the plugin uses (Baileys' `sock.ev`). */
export interface WhatsAppEventEmitterLike {
  /** Adds a listener for one Baileys event. */
  on<E extends keyof WhatsAppEventMap>(event: E, listener: (arg: WhatsAppEventMap[E]) => void): void;
  /** Removes a listener added with `on`. */
  off<E extends keyof WhatsAppEventMap>(event: E, listener: (arg: WhatsAppEventMap[E]) => void): void;
}

/**
 * The narrow part of a Baileys socket the plugin uses. Baileys' `makeWASocket` returns a superset;
 * tests pass a fake through {@link WhatsAppPluginOptions.makeSocket}.
 */
export interface WhatsAppSocketLike {
  /** The socket's event emitter (`connection.update`, `messages.upsert`, `creds.update`, ...). */
  ev: WhatsAppEventEmitterLike;
  /**
   * The raw WebSocket wrapper. Baileys emits `frame` on it for every frame received from
   * WhatsApp (keep-alive answers included); the plugin judges health by it. Optional.
   */
  ws?: {
    on(event: 'frame', listener: () => void): unknown;
    off(event: 'frame', listener: () => void): unknown;
  };
  /** The linked account once connected: `id` is the phone JID (with device), `lid` its LID. */
  user?: Contact | undefined;
  /**
   * Baileys 7's LID store: which phone number a LID belongs to (learned from WhatsApp's own
   * mapping messages and usync). Optional; the plugin also keeps its own map.
   */
  signalRepository?: {
    lidMapping: { getPNForLID(lid: string): Promise<string | null> };
  };
  /** Sends a text message to a JID, optionally quoting a message; resolves with the sent message. */
  sendMessage(
    jid: string,
    content: { text: string },
    options?: { quoted?: WAMessage },
  ): Promise<WAMessage | undefined>;
  /** Sets the account's presence, e.g. `composing` in a chat (the typing indicator). */
  sendPresenceUpdate(type: WAPresence, toJid?: string): Promise<void>;
  /** Marks messages as read. */
  readMessages(keys: WAMessageKey[]): Promise<void>;
  /** A group's metadata (subject, participants); fills the group cache on a miss. Optional. */
  groupMetadata?(jid: string): Promise<GroupMetadata>;
  /**
   * The decrypted bytes of a media message (Baileys' `downloadMediaMessage` as a stream). Optional:
   * without it, media is described but not downloaded.
   */
  downloadMedia?(msg: WAMessage): Promise<AsyncIterable<Uint8Array>>;
  /** Closes the connection without unlinking the device. */
  end(error: Error | undefined): void;
  /** Unlinks this device from the phone and closes the connection. */
  logout(msg?: string): Promise<void>;
}

/** What the plugin passes to the socket factory: Baileys' own socket config. */
export type WhatsAppSocketConfig = UserFacingSocketConfig & { auth: AuthenticationState };

/** Makes a socket. Defaults to Baileys' `makeWASocket`; tests inject a fake. */
export type WhatsAppSocketFactory = (config: WhatsAppSocketConfig) => WhatsAppSocketLike;
