import { randomUUID } from 'node:crypto';
import {
  type ChannelPlugin,
  type ColloquyConfig,
  deriveSessionKey,
  type InboundMessage,
  type SessionRecord,
  type ThreadBinding,
  threadBindingKey,
} from '@colloquy/core';
import {
  agentConfigFor,
  agentIdFromSessionKey,
  classifySessionKey,
  defaultAgentId,
} from '@colloquy/core/internal';
import type { StoreOperations } from '@colloquy/core/store';

/**
 * The session key an inbound message belongs to. A thread bound to a session (and not expired)
 * wins; otherwise the key is derived from the chat with `session.dmScope` and the plugin's thread
 * kind (`thread` or `topic`). Direct chats are keyed by the sender, groups and channels by the chat.
 *
 * @param store - the store (thread bindings)
 * @param config - the resolved config
 * @param plugin - the inbound message's plugin, when running
 * @param inbound - the message
 * @param now - epoch ms
 * @returns the internal key, and the thread binding it came from (if any)
 */
export async function sessionKeyForInbound(
  store: StoreOperations,
  config: ColloquyConfig,
  plugin: ChannelPlugin | undefined,
  inbound: InboundMessage,
  now: number,
): Promise<{ key: string; binding?: ThreadBinding }> {
  if (inbound.threadId) {
    const bindingKey = threadBindingKey(plugin?.capabilities.threadScope, inbound.chat.id, inbound.threadId);
    const binding = await store.getThreadBinding(inbound.channel, inbound.accountId, bindingKey);
    // The binding must belong to this chat (a guard for thread ids keyed without their chat).
    const live = binding && (binding.expiresAt === undefined || binding.expiresAt > now);
    if (binding && live && binding.conversationId === inbound.chat.id) {
      return { key: binding.sessionKey, binding };
    }
  }
  const key = deriveSessionKey(
    {
      agentId: defaultAgentId(config),
      channel: inbound.channel,
      accountId: inbound.accountId,
      chatType: inbound.chat.type,
      peerId: inbound.chat.type === 'direct' ? inbound.sender.id : inbound.chat.id,
      ...(inbound.threadId ? { threadId: inbound.threadId } : {}),
      ...(plugin?.capabilities.threadKind ? { threadKind: plugin.capabilities.threadKind } : {}),
    },
    { dmScope: config.session.dmScope, mainKey: config.session.mainKey },
  );
  return { key };
}

/**
 * The session record after an inbound message: created when new, and in both cases carrying the
 * chat as its delivery context (see {@link inboundSessionUpdate}). Not stored: the caller writes it.
 *
 * @param config - the resolved config
 * @param existing - the stored session, if any
 * @param key - the session key
 * @param inbound - the message
 * @param now - epoch ms
 * @returns the record to store
 */
export function sessionAfterInbound(
  config: ColloquyConfig,
  existing: SessionRecord | undefined,
  key: string,
  inbound: InboundMessage,
  now: number,
): SessionRecord {
  return { ...(existing ?? newInboundSession(config, key, now)), ...inboundSessionUpdate(inbound, now) };
}

/**
 * What an inbound message sets on its session, new or stored: the chat as its delivery context
 * (`deliveryContext`, `lastChannel`, `lastTo`, `lastAccountId`), its chat type, channel and
 * display name (when the message names one; a stored name is kept otherwise).
 *
 * @param inbound - the message
 * @param now - epoch ms
 * @returns the fields to merge into the session
 */
export function inboundSessionUpdate(
  inbound: InboundMessage,
  now: number,
): Pick<
  SessionRecord,
  'deliveryContext' | 'lastChannel' | 'lastTo' | 'lastAccountId' | 'chatType' | 'channel' | 'updatedAt'
> &
  Pick<Partial<SessionRecord>, 'displayName'> {
  const displayName =
    inbound.chat.type === 'direct' ? (inbound.sender.name ?? inbound.sender.username) : inbound.chat.title;
  return {
    deliveryContext: {
      channel: inbound.channel,
      to: inbound.chat.id,
      accountId: inbound.accountId,
      ...(inbound.threadId ? { threadId: inbound.threadId } : {}),
    },
    lastChannel: inbound.channel,
    lastTo: inbound.chat.id,
    lastAccountId: inbound.accountId,
    chatType: inbound.chat.type,
    channel: inbound.channel,
    updatedAt: now,
    ...(displayName ? { displayName } : {}),
  };
}

/**
 * The record of a session an inbound message creates (kind and agent from its key), before
 * {@link inboundSessionUpdate} is merged in.
 *
 * @param config - the resolved config
 * @param key - the session key
 * @param now - epoch ms
 * @returns the record
 */
export function newInboundSession(config: ColloquyConfig, key: string, now: number): SessionRecord {
  const agentId = agentIdFromSessionKey(key) ?? defaultAgentId(config);
  return {
    key,
    sessionId: randomUUID(),
    agentId,
    kind: classifySessionKey(key, { mainKey: config.session.mainKey }),
    createdAt: now,
    updatedAt: now,
    status: 'idle',
    sandboxed: agentConfigFor(config, agentId)?.sandboxed ?? false,
    spawnDepth: 0,
  };
}
