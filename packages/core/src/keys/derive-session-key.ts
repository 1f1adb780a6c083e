/**
 * Deriving the key of the session an inbound message belongs to, and keys for sub-agents.
 */
import type { DmScope } from '../config/schema.js';
import { ColloquyError } from '../errors/colloquy-error.js';
import type { ChatType } from '../interfaces/records.js';
import { formatSessionKey, type ParsedSessionKey, type ThreadSuffix } from './session-key.js';

/** Where an inbound message came from, as a channel plugin sees it. */
export interface SessionKeyInput {
  /** The agent that handles this chat. */
  agentId: string;
  /** The channel plugin id, e.g. `telegram`. */
  channel: string;
  /** The bot account within the channel. */
  accountId: string;
  /** The type of the chat. */
  chatType: ChatType;
  /** The sender for direct chats; the chat id for groups and channels. */
  peerId: string;
  /** A thread or forum topic inside the chat. */
  threadId?: string;
  /** `thread` (default; e.g. Discord) or `topic` (Telegram forum topics). */
  threadKind?: 'thread' | 'topic';
}

/** Options of `deriveSessionKey`. */
export interface DeriveSessionKeyOptions {
  /** `session.dmScope`; default `per-channel-peer`. */
  dmScope?: DmScope;
  /** `session.mainKey`; default `main`. */
  mainKey?: string;
}

/**
 * The session key for a chat:
 * - direct, by `dmScope`: `per-channel-peer` (default) `agent:<a>:<channel>:dm:<peer>`, `per-peer`
 *   `agent:<a>:dm:<peer>`, `per-account-channel-peer` `agent:<a>:<channel>:<accountId>:dm:<peer>`,
 *   `main` the agent's main key `agent:<a>:<mainKey>`;
 * - group `agent:<a>:<channel>:group:<id>`; channel `agent:<a>:<channel>:channel:<id>`;
 * - plus `:thread:<t>` or `:topic:<t>` when `threadId` is set.
 *
 * @param input - the chat as normalised by the channel plugin
 * @param opts - `dmScope` and `mainKey` from the config (`config.session`)
 * @returns the normalised internal key
 * @throws ColloquyError `INVALID_ARGUMENT` when a needed id (agentId, channel, peerId, or accountId
 *   under `per-account-channel-peer`) is empty
 *
 * @example
 * ```ts
 * deriveSessionKey(
 *   { agentId: 'main', channel: 'telegram', accountId: 'default', chatType: 'group', peerId: '-100123', threadId: '7', threadKind: 'topic' },
 *   config.session,
 * ); // 'agent:main:telegram:group:-100123:topic:7'
 * ```
 */
export function deriveSessionKey(input: SessionKeyInput, opts: DeriveSessionKeyOptions = {}): string {
  const { agentId, channel } = input;
  const thread: ThreadSuffix | undefined =
    input.threadId !== undefined && input.threadId.trim() !== ''
      ? { kind: input.threadKind ?? 'thread', id: input.threadId }
      : undefined;
  const withThread = <K extends ParsedSessionKey>(key: K): K => (thread ? { ...key, thread } : key);

  if (input.chatType === 'group' || input.chatType === 'channel') {
    return formatSessionKey(
      withThread({ type: 'group', agentId, channel, chatType: input.chatType, chatId: input.peerId }),
    );
  }
  const scope = opts.dmScope ?? 'per-channel-peer';
  switch (scope) {
    case 'main':
      return formatSessionKey(withThread({ type: 'main', agentId, mainKey: opts.mainKey ?? 'main' }));
    case 'per-peer':
      return formatSessionKey(withThread({ type: 'dm', agentId, peerId: input.peerId }));
    case 'per-channel-peer':
      return formatSessionKey(withThread({ type: 'dm', agentId, channel, peerId: input.peerId }));
    case 'per-account-channel-peer':
      return formatSessionKey(
        withThread({ type: 'dm', agentId, channel, accountId: input.accountId, peerId: input.peerId }),
      );
    default:
      throw new ColloquyError(
        'INVALID_ARGUMENT',
        `Unknown dmScope "${String(scope)}"; use per-channel-peer, per-peer, per-account-channel-peer or main.`,
      );
  }
}

/**
 * The key of a new sub-agent session: `agent:<agentId>:subagent:<uuid>`.
 *
 * @param agentId - the agent the sub-agent runs as
 * @param id - the sub-agent id; default a fresh `crypto.randomUUID()`
 * @returns the normalised internal key
 * @throws ColloquyError `INVALID_ARGUMENT` when `agentId` (or a given `id`) is empty
 */
export function subagentSessionKey(agentId: string, id?: string): string {
  return formatSessionKey({ type: 'subagent', agentId, subagentId: id ?? globalThis.crypto.randomUUID() });
}
