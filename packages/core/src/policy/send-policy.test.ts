import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { SendPolicyConfig, SendPolicyRule } from '../config/schema.js';
import type { ChatType } from '../interfaces/records.js';
import { evaluateSendPolicy, parseSendCommand, type SendPolicyTarget } from './send-policy.js';

const policy = (rules: SendPolicyRule[], fallback: 'allow' | 'deny' = 'allow'): SendPolicyConfig => ({
  rules,
  default: fallback,
});

const discordGroup: SendPolicyTarget = {
  key: 'agent:main:discord:group:1',
  channel: 'discord',
  chatType: 'group',
};

describe('evaluateSendPolicy', () => {
  it('allows by default when no rule matches', () => {
    expect(evaluateSendPolicy(discordGroup, policy([]))).toMatchObject({ allowed: true, source: 'default' });
  });

  it('denies by default when the default is deny, and says which setting decided', () => {
    const verdict = evaluateSendPolicy(discordGroup, policy([], 'deny'));
    expect(verdict).toMatchObject({ allowed: false, source: 'default' });
    expect(verdict.reason).toContain('session.sendPolicy.default');
  });

  it('applies a rule whose fields all match', () => {
    const verdict = evaluateSendPolicy(
      discordGroup,
      policy([{ match: { channel: 'discord', chatType: 'group' }, action: 'deny' }]),
    );
    expect(verdict).toMatchObject({ allowed: false, source: 'rule' });
    expect(verdict.reason).toContain('session.sendPolicy.rules[0]');
    expect(verdict.reason).toContain('channel=discord');
  });

  it('skips a rule when any one field does not match', () => {
    const rules: SendPolicyRule[] = [
      { match: { channel: 'discord', chatType: 'direct' }, action: 'deny' },
      { match: { channel: 'telegram', chatType: 'group' }, action: 'deny' },
      { match: { keyPrefix: 'agent:other:' }, action: 'deny' },
    ];
    expect(evaluateSendPolicy(discordGroup, policy(rules)).allowed).toBe(true);
  });

  it('lets a matching deny win over a matching allow, in any order', () => {
    const allow: SendPolicyRule = { match: { channel: 'discord' }, action: 'allow' };
    const deny: SendPolicyRule = { match: { chatType: 'group' }, action: 'deny' };
    expect(evaluateSendPolicy(discordGroup, policy([allow, deny])).allowed).toBe(false);
    expect(evaluateSendPolicy(discordGroup, policy([deny, allow])).allowed).toBe(false);
  });

  it('lets a matching allow beat a deny default', () => {
    const verdict = evaluateSendPolicy(
      discordGroup,
      policy([{ match: { channel: 'discord' }, action: 'allow' }], 'deny'),
    );
    expect(verdict).toMatchObject({ allowed: true, source: 'rule' });
  });

  it('lets the session override win over rules and default', () => {
    const rules = policy([{ match: {}, action: 'deny' }], 'deny');
    const verdict = evaluateSendPolicy({ ...discordGroup, sendPolicy: 'allow' }, rules);
    expect(verdict).toMatchObject({ allowed: true, source: 'override' });
    expect(verdict.reason).toContain('/send');
    expect(evaluateSendPolicy({ ...discordGroup, sendPolicy: 'deny' }, policy([])).allowed).toBe(false);
  });

  it('matches keyPrefix against the normalised key, whatever the spelling of either', () => {
    const rules = policy([{ match: { keyPrefix: ' Agent:MAIN:Discord:GROUP:' }, action: 'deny' }]);
    expect(evaluateSendPolicy({ key: ' AGENT:main:DISCORD:group:1 ' }, rules).allowed).toBe(false);
    expect(evaluateSendPolicy({ key: 'agent:main:discord:channel:1' }, rules).allowed).toBe(true);
  });

  it('matches a keyPrefix without the agent head against the key without its head (spec section 11)', () => {
    const rules = policy([{ match: { keyPrefix: 'discord:channel:' }, action: 'deny' }]);
    expect(evaluateSendPolicy({ key: 'agent:main:discord:channel:123' }, rules).allowed).toBe(false);
    expect(evaluateSendPolicy({ key: 'agent:ops:discord:channel:9' }, rules).allowed).toBe(false);
    expect(evaluateSendPolicy({ key: 'agent:main:telegram:group:1' }, rules).allowed).toBe(true);
    expect(evaluateSendPolicy({ key: 'agent:main:main' }, rules).allowed).toBe(true);
  });

  it("takes a rule's channel from the session: channel, else deliveryContext, else lastChannel (spec section 11)", () => {
    const rules = policy([{ match: { channel: 'telegram' }, action: 'deny' }]);
    const main = { key: 'agent:main:main' };
    const to = { channel: 'telegram', to: '42', accountId: 'default' };
    expect(evaluateSendPolicy(main, rules).allowed).toBe(true);
    expect(evaluateSendPolicy({ ...main, deliveryContext: to }, rules).allowed).toBe(false);
    expect(evaluateSendPolicy({ ...main, lastChannel: 'telegram' }, rules).allowed).toBe(false);
    expect(evaluateSendPolicy({ ...main, channel: 'discord', deliveryContext: to }, rules).allowed).toBe(
      true,
    );
    expect(
      evaluateSendPolicy(
        { ...main, deliveryContext: { ...to, channel: 'webchat' }, lastChannel: 'telegram' },
        rules,
      ).allowed,
    ).toBe(true);
  });

  it('keeps the case of platform ids in a keyPrefix', () => {
    const rules = policy([{ match: { keyPrefix: 'agent:main:telegram:dm:Alice' }, action: 'deny' }]);
    expect(evaluateSendPolicy({ key: 'agent:main:telegram:dm:Alice' }, rules).allowed).toBe(false);
    expect(evaluateSendPolicy({ key: 'agent:main:telegram:dm:alice' }, rules).allowed).toBe(true);
  });

  it('accepts a keyPrefix that stops inside a part', () => {
    const rules = policy([{ match: { keyPrefix: 'agent:main:tele' }, action: 'deny' }]);
    expect(evaluateSendPolicy({ key: 'agent:main:telegram:dm:1' }, rules).allowed).toBe(false);
  });

  it('reads channel and chat type from the key when the target does not say', () => {
    const rules = policy([{ match: { channel: 'Telegram', chatType: 'direct' }, action: 'deny' }]);
    expect(evaluateSendPolicy({ key: 'agent:main:telegram:dm:5' }, rules).allowed).toBe(false);
    expect(evaluateSendPolicy({ key: 'agent:main:telegram:group:5' }, rules).allowed).toBe(true);
    expect(evaluateSendPolicy({ key: 'agent:main:main' }, rules).allowed).toBe(true);
  });
});

describe('send policy properties', () => {
  const channels = ['telegram', 'discord'] as const;
  const chatTypes: ChatType[] = ['direct', 'group', 'channel'];
  const prefixes = ['agent:main:', 'agent:main:telegram:', 'agent:ops:'] as const;
  const targetArb = fc.record({
    agent: fc.constantFrom('main', 'ops'),
    channel: fc.constantFrom(...channels),
    chatType: fc.constantFrom(...chatTypes),
    id: fc.constantFrom('1', '2'),
  });
  const ruleArb: fc.Arbitrary<SendPolicyRule> = fc.record({
    match: fc.record(
      {
        channel: fc.constantFrom(...channels),
        chatType: fc.constantFrom(...chatTypes),
        keyPrefix: fc.constantFrom(...prefixes),
      },
      { requiredKeys: [] },
    ),
    action: fc.constantFrom('allow' as const, 'deny' as const),
  });
  const toTarget = (t: {
    agent: string;
    channel: string;
    chatType: ChatType;
    id: string;
  }): SendPolicyTarget => ({
    key: `agent:${t.agent}:${t.channel}:${t.chatType === 'direct' ? 'dm' : t.chatType}:${t.id}`,
    channel: t.channel,
    chatType: t.chatType,
  });
  // An independent reading of "matches": every field given equals the target's.
  const matches = (rule: SendPolicyRule, target: SendPolicyTarget) =>
    (rule.match.channel === undefined || rule.match.channel === target.channel) &&
    (rule.match.chatType === undefined || rule.match.chatType === target.chatType) &&
    (rule.match.keyPrefix === undefined || target.key.startsWith(rule.match.keyPrefix));

  it('denies whenever a matching deny exists, and otherwise follows allow rules then the default', () => {
    fc.assert(
      fc.property(
        targetArb,
        fc.array(ruleArb, { maxLength: 6 }),
        fc.constantFrom('allow' as const, 'deny' as const),
        (t, rules, fallback) => {
          const target = toTarget(t);
          const verdict = evaluateSendPolicy(target, policy(rules, fallback));
          const matching = rules.filter((r) => matches(r, target));
          if (matching.some((r) => r.action === 'deny'))
            expect(verdict).toMatchObject({ allowed: false, source: 'rule' });
          else if (matching.length > 0) expect(verdict).toMatchObject({ allowed: true, source: 'rule' });
          else expect(verdict).toMatchObject({ allowed: fallback === 'allow', source: 'default' });
        },
      ),
      { numRuns: 300 },
    );
  });

  it('gives the same answer whatever the order of the rules', () => {
    fc.assert(
      fc.property(targetArb, fc.array(ruleArb, { maxLength: 6 }), (t, rules) => {
        const target = toTarget(t);
        const forward = evaluateSendPolicy(target, policy(rules)).allowed;
        expect(evaluateSendPolicy(target, policy([...rules].reverse())).allowed).toBe(forward);
      }),
      { numRuns: 200 },
    );
  });

  it('lets an override decide, whatever the rules and default', () => {
    fc.assert(
      fc.property(
        targetArb,
        fc.array(ruleArb, { maxLength: 6 }),
        fc.constantFrom('allow' as const, 'deny' as const),
        fc.constantFrom('allow' as const, 'deny' as const),
        (t, rules, fallback, override) => {
          const verdict = evaluateSendPolicy(
            { ...toTarget(t), sendPolicy: override },
            policy(rules, fallback),
          );
          expect(verdict).toMatchObject({ allowed: override === 'allow', source: 'override' });
        },
      ),
      { numRuns: 200 },
    );
  });
});

describe('parseSendCommand', () => {
  it.each([
    ['/send on', 'allow'],
    ['/send off', 'deny'],
    ['/send inherit', 'inherit'],
    ['  /send off  ', 'deny'],
    ['/SEND On', 'allow'],
    ['/Send\tinherit', 'inherit'],
  ] as const)('reads %j as %s', (text, expected) => {
    expect(parseSendCommand(text)).toBe(expected);
  });

  it.each([
    '/send',
    '/send maybe',
    '/send on please',
    'please /send on',
    '/sendon',
    '/send\non',
    'send on',
    '/send on /send off',
    '',
  ])('ignores %j', (text) => {
    expect(parseSendCommand(text)).toBeUndefined();
  });
});
