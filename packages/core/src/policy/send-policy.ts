/**
 * Send policy: may anything be sent out to a session's chat? A session's own override wins;
 * otherwise a matching `deny` rule wins over a matching `allow`; otherwise the default.
 */
import type { SendPolicyConfig, SendPolicyRule } from '../config/schema.js';
import type { ChatType, SendPolicyOverride } from '../interfaces/records.js';
import { normalizeSessionKey, parseSessionKey } from '../keys/session-key.js';

/** What the policy looks at: the session's key, its channel and chat type, and its own override. */
export interface SendPolicyTarget {
  /** The session key (any spelling). */
  key: string;
  /**
   * The session's channel. A rule's `channel` is matched against this, else `deliveryContext.channel`,
   * else `lastChannel`, else the channel the key names: pass the whole session record, so the tools
   * and the delivery pipeline give the same verdict.
   */
  channel?: string;
  /** Where the session's replies go (its channel counts when `channel` is unset). */
  deliveryContext?: { channel: string };
  /** The channel the session was last active on. */
  lastChannel?: string;
  /** The chat type; when unset, taken from the key (`dm` keys are direct, group keys group/channel). */
  chatType?: ChatType;
  /** The session's own override; unset means inherit the configured rules. */
  sendPolicy?: SendPolicyOverride;
}

/** The verdict of `evaluateSendPolicy`. */
export interface SendPolicyDecision {
  /** True when the send may go out. */
  allowed: boolean;
  /** What decided: the session's override, a rule, or the default. */
  source: 'override' | 'rule' | 'default';
  /** One sentence naming what decided and how to change it. */
  reason: string;
}

/**
 * Decides whether a send to a session is allowed. Use it on every outbound path (chat send, agent
 * delivery, auto-reply, announces, error notices).
 *
 * Rules match when every field set in `match` matches: `channel` (case-insensitive), `chatType`, and
 * `keyPrefix` (a prefix of the normalised key, or of the key without its `agent:<agentId>:` head, so
 * `discord:channel:` matches `agent:main:discord:channel:123`; the prefix is compared normalised too).
 * A rule with an empty `match` matches every session.
 *
 * @param target - the session (a `SessionRecord` fits)
 * @param policy - `config.session.sendPolicy`
 * @returns `{ allowed, source, reason }`
 *
 * @example
 * ```ts
 * const verdict = evaluateSendPolicy(session, config.session.sendPolicy);
 * if (!verdict.allowed) return { status: 'forbidden', error: verdict.reason };
 * ```
 */
export function evaluateSendPolicy(target: SendPolicyTarget, policy: SendPolicyConfig): SendPolicyDecision {
  const key = normalizeSessionKey(target.key);
  if (target.sendPolicy === 'allow' || target.sendPolicy === 'deny') {
    const allowed = target.sendPolicy === 'allow';
    return {
      allowed,
      source: 'override',
      reason: `Sending to ${key} is ${allowed ? 'allowed' : 'denied'} by the session's own send policy override ("${target.sendPolicy}"); the owner can change it with "/send on", "/send off" or "/send inherit", or with sessions.patch.`,
    };
  }
  const facts = factsOf(target, key);
  const matching = policy.rules.flatMap((rule, index) => (ruleMatches(rule, facts) ? [{ rule, index }] : []));
  const deny = matching.find((m) => m.rule.action === 'deny');
  const decisive = deny ?? matching.find((m) => m.rule.action === 'allow');
  if (decisive) {
    const allowed = decisive.rule.action === 'allow';
    return {
      allowed,
      source: 'rule',
      reason: `Sending to ${key} is ${allowed ? 'allowed' : 'denied'} by session.sendPolicy.rules[${decisive.index}] (${describeMatch(decisive.rule)}); change that rule, or set the session's own override with "/send on" / "/send off" or sessions.patch.`,
    };
  }
  const allowed = policy.default !== 'deny';
  return {
    allowed,
    source: 'default',
    reason: `Sending to ${key} is ${allowed ? 'allowed' : 'denied'} by session.sendPolicy.default ("${policy.default}") because no rule matches; add a rule to session.sendPolicy.rules, or set the session's own override with "/send on" / "/send off" or sessions.patch.`,
  };
}

interface TargetFacts {
  key: string;
  channel: string | undefined;
  chatType: ChatType | undefined;
}

function factsOf(target: SendPolicyTarget, key: string): TargetFacts {
  const parsed = parseSessionKey(key);
  const k = parsed.ok ? parsed.key : undefined;
  const keyChannel = k && 'channel' in k ? k.channel : undefined;
  const keyChatType: ChatType | undefined =
    k?.type === 'dm' ? 'direct' : k?.type === 'group' ? k.chatType : undefined;
  return {
    key,
    channel: (target.channel ?? target.deliveryContext?.channel ?? target.lastChannel ?? keyChannel)
      ?.trim()
      .toLowerCase(),
    chatType: target.chatType ?? keyChatType,
  };
}

function ruleMatches(rule: SendPolicyRule, facts: TargetFacts): boolean {
  const { channel, chatType, keyPrefix } = rule.match;
  if (channel !== undefined && channel.trim().toLowerCase() !== facts.channel) return false;
  if (chatType !== undefined && chatType !== facts.chatType) return false;
  if (keyPrefix !== undefined) {
    // The prefix matches the normalised key, or the key without its `agent:<agentId>:` head.
    const prefix = normalizePrefix(keyPrefix);
    const headless = facts.key.replace(/^agent:[^:]+:/, '');
    if (!facts.key.startsWith(prefix) && !headless.startsWith(prefix)) return false;
  }
  return true;
}

const FIXED_WORDS = new Set([
  'agent',
  'group',
  'channel',
  'dm',
  'thread',
  'topic',
  'subagent',
  'cron',
  'hook',
]);

/**
 * Normalises a key prefix part by part, like a key: parts trimmed; fixed words, the agent id, the
 * part after it (a channel, a main key or a fixed word) and sub-agent ids lower-cased; platform ids
 * kept. A prefix may stop anywhere, even inside a part (`agent:main:tele`).
 */
function normalizePrefix(prefix: string): string {
  const parts = prefix
    .trim()
    .split(':')
    .map((part) => part.trim());
  const agentScoped = parts[0]?.toLowerCase() === 'agent';
  return parts
    .map((part, i) => {
      const lower = part.toLowerCase();
      if (FIXED_WORDS.has(lower)) return lower;
      if (agentScoped && (i === 1 || i === 2)) return lower;
      if (agentScoped && i === 3 && parts[2]?.toLowerCase() === 'subagent') return lower;
      if (i === 0 && (['main', 'global', 'unknown'].includes(lower) || lower.startsWith('node-'))) {
        return lower.startsWith('node-') ? `node-${part.slice(5)}` : lower;
      }
      return part;
    })
    .join(':');
}

function describeMatch(rule: SendPolicyRule): string {
  const parts = Object.entries(rule.match)
    .filter(([, value]) => value !== undefined)
    .map(([field, value]) => `${field}=${String(value)}`);
  return parts.length === 0 ? 'matches every session' : `match ${parts.join(', ')}`;
}

/**
 * Reads an owner's `/send` command: exactly `/send on`, `/send off` or `/send inherit` as the whole
 * message (surrounding whitespace ignored, case-insensitive). Anything else is not a command.
 *
 * @param text - the inbound message text
 * @returns `allow` for on, `deny` for off, `inherit` to clear the override, else `undefined`
 *
 * @example
 * ```ts
 * parseSendCommand(' /send OFF '); // 'deny'
 * parseSendCommand('/send off please'); // undefined
 * ```
 */
export function parseSendCommand(text: string): 'allow' | 'deny' | 'inherit' | undefined {
  if (typeof text !== 'string') return undefined;
  const match = /^\/send[ \t]+(on|off|inherit)$/i.exec(text.trim());
  const word = match?.[1]?.toLowerCase();
  return word === 'on' ? 'allow' : word === 'off' ? 'deny' : word === 'inherit' ? 'inherit' : undefined;
}
