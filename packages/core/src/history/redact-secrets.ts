/**
 * Secret redaction for text shown to models and people: configured secret values, API keys of the
 * major providers, bearer and basic credentials, JWTs, private key blocks, passwords in URLs, and
 * `NAME=value` assignments of keys, tokens, secrets and passwords.
 */

/** What a redacted secret is replaced with. */
export const REDACTION_MARK = '[REDACTED]';

/** The result of redacting one text. */
export interface RedactionResult {
  /** The text with every secret replaced by the redaction mark. */
  text: string;
  /** True when anything was replaced. */
  redacted: boolean;
}

/** A reusable redactor: the configured secrets are compiled once. */
export type Redactor = (text: string) => RedactionResult;

interface Rule {
  pattern: RegExp;
  replace: (match: string, ...groups: string[]) => string;
}

const mark = () => REDACTION_MARK;
// Token characters; a match must not continue a longer token on either side.
const T = 'A-Za-z0-9_\\-';
const tokenRule = (body: string): Rule => ({
  pattern: new RegExp(`(?<![${T}])(?:${body})(?![${T}])`, 'g'),
  replace: mark,
});

const RULES: readonly Rule[] = [
  // PEM private keys, also a block cut off before its END line.
  {
    pattern:
      /-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----[\s\S]*?(?:-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|$)/g,
    replace: mark,
  },
  // scheme://user:password@host -> scheme://user:***@host. Tried only where `://` starts, with the
  // scheme checked behind it, so a long run of scheme characters is not scanned again from each of
  // its positions (which made redaction quadratic in the text's length).
  {
    pattern: /(?=:\/\/)(?<=\b[a-z][a-z0-9+.-]*)(:\/\/[^\s:@/?#]*):([^\s@/?#]+)@/gi,
    replace: (_m, prefix) => `${prefix}:***@`,
  },
  // Authorization headers.
  {
    pattern: /\b(bearer\s+)(?=[A-Za-z0-9._~+/=-]*\d)[A-Za-z0-9._~+/=-]{8,}/gi,
    replace: (_m, head) => `${head}${REDACTION_MARK}`,
  },
  {
    pattern: /\b(authorization:\s*basic\s+)[A-Za-z0-9+/=]{8,}/gi,
    replace: (_m, head) => `${head}${REDACTION_MARK}`,
  },
  // NAME=value / "apiKey": "value" for keys, tokens, secrets and passwords. The match starts at the
  // word that ends the name (what comes before it stays as it is), so no position is scanned twice.
  {
    pattern:
      /(api[_-]?key|access[_-]?key|secret|token|password|passwd|pwd)(["']?\s*[:=]\s*["']?)([^\s"',;]{8,})/gi,
    replace: (_m, name, separator) => `${name}${separator}${REDACTION_MARK}`,
  },
  // Provider API keys and bot tokens.
  tokenRule('sk-ant-[A-Za-z0-9_-]{16,}'),
  tokenRule('sk-(?:proj-|svcacct-|admin-)?(?=[A-Za-z0-9_-]*\\d)[A-Za-z0-9_-]{20,}'),
  tokenRule('(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}|whsec_[A-Za-z0-9]{16,}'),
  tokenRule('AIza[0-9A-Za-z_-]{35}'),
  tokenRule('gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,}'),
  tokenRule('xox[abposr]-[A-Za-z0-9-]{10,}|xapp-\\d-[A-Za-z0-9-]{10,}'),
  tokenRule('(?:AKIA|ASIA)[0-9A-Z]{16}'),
  tokenRule('\\d+:[A-Za-z0-9_-]{35}'),
  tokenRule('[MNO][A-Za-z0-9_-]{23,27}\\.[A-Za-z0-9_-]{6,7}\\.[A-Za-z0-9_-]{27,40}'),
  tokenRule('eyJ[A-Za-z0-9_-]{8,}\\.[A-Za-z0-9_-]{8,}\\.[A-Za-z0-9_-]*'),
];

/**
 * Builds a redactor for a set of configured secret values (matched as exact substrings, longest
 * first, in one pass) plus the built-in patterns. Reuse it when redacting many texts.
 *
 * @param secrets - exact secret values (empty strings are ignored)
 * @returns a function from text to `{ text, redacted }`
 */
export function createRedactor(secrets: readonly string[] = []): Redactor {
  const exact = [...new Set(secrets.filter((s) => typeof s === 'string' && s !== ''))].sort(
    (a, b) => b.length - a.length,
  );
  const secretPattern = exact.length === 0 ? undefined : new RegExp(exact.map(escapeRegExp).join('|'), 'g');
  return (text) => {
    let redacted = false;
    let out = text;
    if (secretPattern) {
      out = out.replace(secretPattern, () => {
        redacted = true;
        return REDACTION_MARK;
      });
    }
    for (const rule of RULES) {
      out = out.replace(rule.pattern, (...args: unknown[]) => {
        redacted = true;
        const groups = args.slice(0, -2).map((g) => (typeof g === 'string' ? g : ''));
        return rule.replace(...(groups as [string, ...string[]]));
      });
    }
    return { text: out, redacted };
  };
}

/**
 * Redacts secrets from one text: the given secret values, provider API keys (OpenAI, Anthropic,
 * Google, GitHub, Slack, AWS, Stripe), Telegram and Discord bot tokens, `Bearer`/`Basic`
 * credentials, JWTs, PEM private keys, passwords in URLs (`user:***@`) and `NAME=value` secrets.
 *
 * @param text - the text to clean
 * @param secrets - extra exact values to remove (e.g. `config.redaction.secrets`)
 * @returns `{ text, redacted }`; `text` is unchanged when nothing matched
 *
 * @example
 * ```ts
 * redactSecrets('curl -H "Authorization: Bearer abc123def456"').text; // 'curl -H "Authorization: Bearer [REDACTED]"'
 * ```
 */
export function redactSecrets(text: string, secrets?: readonly string[]): RedactionResult {
  return createRedactor(secrets)(text);
}

function escapeRegExp(value: string): string {
  return value.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
