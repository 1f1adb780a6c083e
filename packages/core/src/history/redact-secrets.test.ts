import { describe, expect, it } from 'vitest';
import { createRedactor, REDACTION_MARK, redactSecrets } from './redact-secrets.js';

// Fake credentials, assembled at run time so no scanner mistakes this file for a leak.
const fake = (...parts: string[]) => parts.join('');
const A20 = 'Ab1Cd2Ef3Gh4Ij5Kl6Mn';
const ALNUM36 = 'a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8';

describe('redactSecrets: provider keys and tokens', () => {
  it.each([
    ['OpenAI legacy key', fake('sk-', A20, 'xyz123XYZ456abc789DEF0123')],
    ['OpenAI project key', fake('sk-proj-', A20, '_-', A20)],
    ['Anthropic key', fake('sk-ant-api03-', A20, A20)],
    ['Google API key', fake('AIza', 'SyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q')],
    ['GitHub token', fake('ghp_', ALNUM36)],
    ['GitHub fine-grained token', fake('github_pat_', '11ABCDEFG0', A20, 'xyz_0123456789')],
    ['Slack bot token', fake('xoxb-', '1234567890-0987654321-', A20)],
    ['AWS access key id', fake('AKIA', 'IOSFODNN7EXAMPLE')],
    ['Stripe live key', fake('sk_live_', '51HxYzAbCdEfGhIjKlMnOp')],
    ['Telegram bot token', fake('123456789:', 'AAE', 'h1i2j3k4l5m6n7o8p9q0r1s2t3u4v5w6')],
    [
      'Discord bot token',
      fake('MTA5', 'ODc2NTQzMjEwOTg3NjU0MzIx', '.GabcDE.', 'abcdefghijklmnopqrstuvwxyz0123456789AB'),
    ],
    [
      'JWT',
      fake(
        'eyJhbGciOiJIUzI1NiJ9',
        '.',
        'eyJzdWIiOiIxMjM0NTY3ODkwIn0',
        '.',
        'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk',
      ),
    ],
  ])('removes a %s', (_name, secret) => {
    const result = redactSecrets(`before ${secret} after`);
    expect(result.text).toBe(`before ${REDACTION_MARK} after`);
    expect(result.redacted).toBe(true);
  });

  it('keeps the word Bearer and redacts the token', () => {
    expect(redactSecrets('Authorization: Bearer abc123.def456-ghi').text).toBe(
      `Authorization: Bearer ${REDACTION_MARK}`,
    );
  });

  it('redacts basic credentials in an Authorization header', () => {
    expect(redactSecrets('Authorization: Basic dXNlcjpwYXNzd29yZA==').text).toBe(
      `Authorization: Basic ${REDACTION_MARK}`,
    );
  });

  it('redacts whole PEM private key blocks, even one cut off before its end', () => {
    const pem = [
      '-----BEGIN RSA PRIVATE KEY-----',
      'MIIEow',
      'AKCAQEA',
      '-----END RSA PRIVATE KEY-----',
    ].join('\n');
    expect(redactSecrets(`key:\n${pem}\nafter`).text).toBe(`key:\n${REDACTION_MARK}\nafter`);
    expect(redactSecrets('x -----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXk').text).toBe(
      `x ${REDACTION_MARK}`,
    );
  });

  it('masks passwords in URLs and keeps the user', () => {
    expect(redactSecrets('postgres://app:s3cret!@db:5432/x').text).toBe('postgres://app:***@db:5432/x');
    expect(redactSecrets('redis://:hunter22@cache').text).toBe('redis://:***@cache');
    expect(redactSecrets('see https://example.com/a:b@c').text).toBe('see https://example.com/a:b@c');
  });

  it('redacts secret assignments and keeps their names', () => {
    expect(redactSecrets('OPENAI_API_KEY=abcdefgh12345').text).toBe(`OPENAI_API_KEY=${REDACTION_MARK}`);
    expect(redactSecrets('{"apiKey": "abcdefgh12345"}').text).toBe(`{"apiKey": "${REDACTION_MARK}"}`);
    expect(redactSecrets('password: correcthorsebattery').text).toBe(`password: ${REDACTION_MARK}`);
  });

  it('leaves ordinary text alone', () => {
    const texts = [
      'The task-manager-integration-tests passed.',
      'totalTokens: 123456789, outputTokens: 42',
      'agent:main:telegram:dm:123456789',
      'the bearer of good news',
      'password: short',
      'skip-this-step and sk-short',
    ];
    for (const text of texts) expect(redactSecrets(text)).toEqual({ text, redacted: false });
  });

  it('takes time in proportion to the text, also on long runs of dotted or dashed words', () => {
    // Each rule used to rescan such a run from every word boundary in it: 32K characters took seconds.
    const runs = [
      'a.'.repeat(100_000),
      'a-'.repeat(100_000),
      'x.token-'.repeat(25_000),
      'sk-'.repeat(60_000),
    ];
    const started = performance.now();
    for (const text of runs) expect(redactSecrets(`${text} password=abcdefgh12`).redacted).toBe(true);
    expect(performance.now() - started).toBeLessThan(2000);
  });
});

describe('redactSecrets: configured secrets', () => {
  it('removes every occurrence of a configured value', () => {
    expect(redactSecrets('pin hunter22 and hunter22 again', ['hunter22']).text).toBe(
      `pin ${REDACTION_MARK} and ${REDACTION_MARK} again`,
    );
  });

  it('prefers the longest secret when two overlap', () => {
    const result = redactSecrets('value: abcdef-ghijkl', ['abcdef', 'abcdef-ghijkl']);
    expect(result.text).not.toContain('ghijkl');
  });

  it('treats secrets as text, not patterns', () => {
    expect(redactSecrets('a.b*c a-b-c', ['a.b*c']).text).toBe(`${REDACTION_MARK} a-b-c`);
  });

  it('ignores empty secrets', () => {
    expect(redactSecrets('plain', ['']).text).toBe('plain');
  });

  it('can be compiled once and reused', () => {
    const redact = createRedactor(['zzz-secret-1']);
    expect(redact('a zzz-secret-1').text).toBe(`a ${REDACTION_MARK}`);
    expect(redact('b zzz-secret-1').redacted).toBe(true);
    expect(redact('c').redacted).toBe(false);
  });
});
