import { basename, join, normalize, relative, sep } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  ATTACHMENT_MANIFEST,
  attachmentPlaceholder,
  base64DecodedBytes,
  checkAttachmentName,
  checkAttachments,
  isStrictBase64,
} from './attachments.js';

const LIMITS = { maxFiles: 3, maxFileBytes: 16, maxTotalBytes: 24 };
const ROOT = '/srv/workspace/.colloquy/attachments/0b7c';

describe('checkAttachmentName', () => {
  it.each([
    ['../secret', '..'],
    ['..', '..'],
    ['a/b.txt', 'path separator'],
    ['a\\b.txt', 'path separator'],
    ['/etc/passwd', 'path separator'],
    ['x..y', '..'],
    ['.', '"."'],
    ['', 'empty'],
    ['  ', 'empty'],
    [' lead.txt', 'space'],
    ['bell\u0007.txt', 'control'],
    ['nul\u0000.txt', 'control'],
    ['rtl\u202Etxt.exe', 'control'],
    ['line\u2028break', 'control'],
    ['MANIFEST.json', 'reserved'],
    ['\uD800.txt', 'surrogate'],
    ['a'.repeat(256), 'longer than 255'],
  ])('refuses %j (%s)', (name, why) => {
    const result = checkAttachmentName(name);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.reason).toContain(why);
  });

  it.each(['report.md', 'photo 1.JPG', '.env', 'données.csv', 'a.b.c', '日本語.txt', '😀.png'])(
    'accepts the plain name %j',
    (name) => {
      expect(checkAttachmentName(name)).toEqual({ ok: true });
    },
  );

  it('property: an accepted name is one path segment that stays inside the attachments folder', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 40 }), (name) => {
        if (!checkAttachmentName(name).ok) return;
        expect(basename(name)).toBe(name);
        const target = join(ROOT, name);
        expect(normalize(target)).toBe(target);
        const rel = relative(ROOT, target);
        expect(rel).toBe(name);
        expect(rel.startsWith('..')).toBe(false);
        expect(rel.includes(sep)).toBe(false);
      }),
      { numRuns: 2000 },
    );
  });

  it('property: a name holding a separator, "..", or a control character is refused', () => {
    const bad = fc.constantFrom('/', '\\', '..', '\u0000', '\n', '\r', '\t', '\u001b', '\u007f', '\u0085');
    fc.assert(
      fc.property(fc.string({ maxLength: 10 }), bad, fc.string({ maxLength: 10 }), (before, evil, after) => {
        expect(checkAttachmentName(`${before}${evil}${after}`).ok).toBe(false);
      }),
      { numRuns: 1000 },
    );
  });
});

describe('isStrictBase64', () => {
  it('property: what Node encodes is strict, and its decoded size is exact', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 64 }), (bytes) => {
        const text = Buffer.from(bytes).toString('base64');
        expect(isStrictBase64(text)).toBe(true);
        expect(base64DecodedBytes(text)).toBe(bytes.length);
      }),
      { numRuns: 1000 },
    );
  });

  it('property: strict means the text round-trips through decode and encode', () => {
    const alphabet = fc.constantFrom(
      ...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=-_ \n'.split(''),
    );
    fc.assert(
      fc.property(fc.string({ unit: alphabet, maxLength: 24 }), (text) => {
        const roundTrips = Buffer.from(text, 'base64').toString('base64') === text;
        expect(isStrictBase64(text)).toBe(roundTrips);
      }),
      { numRuns: 5000 },
    );
  });

  it('property: whitespace, URL-safe letters or dropped padding make valid base64 invalid', () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ minLength: 1, maxLength: 48 }),
        fc.nat(),
        fc.constantFrom(' ', '\n', '\r\n', '\t'),
        (bytes, at, space) => {
          const text = Buffer.from(bytes).toString('base64');
          const i = at % text.length;
          expect(isStrictBase64(text.slice(0, i) + space + text.slice(i))).toBe(false);
          expect(isStrictBase64(text.replace(/=+$/, '') + (text.endsWith('=') ? '' : '='))).toBe(false);
          const urlSafe = text.replaceAll('+', '-').replaceAll('/', '_');
          if (urlSafe !== text) expect(isStrictBase64(urlSafe)).toBe(false);
        },
      ),
      { numRuns: 1000 },
    );
  });

  it('refuses non-zero padding bits that lenient decoders accept', () => {
    expect(Buffer.from('QR==', 'base64').toString('base64')).toBe('QQ==');
    expect(isStrictBase64('QR==')).toBe(false);
    expect(isStrictBase64('QUJ=')).toBe(false);
    expect(isStrictBase64('QQ==')).toBe(true);
    expect(isStrictBase64('')).toBe(true);
  });
});

describe('checkAttachments', () => {
  it('returns each file with its decoded size', () => {
    const result = checkAttachments(
      [
        { name: 'a.txt', content: 'héllo' },
        { name: 'b.bin', content: 'AAEC', encoding: 'base64', mimeType: 'application/octet-stream' },
      ],
      LIMITS,
    );
    expect(result).toEqual({
      ok: true,
      totalBytes: 9,
      files: [
        { name: 'a.txt', encoding: 'utf8', content: 'héllo', bytes: 6 },
        {
          name: 'b.bin',
          encoding: 'base64',
          content: 'AAEC',
          bytes: 3,
          mimeType: 'application/octet-stream',
        },
      ],
    });
  });

  it.each([
    [
      [
        { name: 'A.txt', content: '' },
        { name: 'a.TXT', content: '' },
      ],
      'duplicates "A.txt"',
    ],
    [
      [
        { name: 'e\u0301.txt', content: '' },
        { name: '\u00e9.txt', content: '' },
      ],
      'duplicates',
    ],
    [
      [
        { name: 'x', content: 'a' },
        { name: 'y', content: 'b' },
        { name: 'z', content: 'c' },
        { name: 'w', content: 'd' },
      ],
      'maxFiles',
    ],
    [[{ name: 'big.txt', content: 'x'.repeat(17) }], 'maxFileBytes'],
    [
      [
        { name: 'a', content: 'x'.repeat(16) },
        { name: 'b', content: 'x'.repeat(9) },
      ],
      'maxTotalBytes',
    ],
    [[{ name: 'bad.bin', content: 'not base64!', encoding: 'base64' as const }], 'not valid base64'],
    [[{ name: 'lone.txt', content: 'x\uDC00' }], 'unpaired surrogate'],
    [[{ name: '../up', content: 'x' }], '".."'],
    [[{ name: 'a', content: 'x', mimeType: 'nonsense' }], 'mimeType'],
    [[{ name: ATTACHMENT_MANIFEST, content: '{}' }], 'reserved'],
  ])('refuses %j, naming the problem', (attachments, expected) => {
    const result = checkAttachments(attachments, LIMITS);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.error).toContain(expected);
  });

  it('property: accepted lists respect every limit and hold no two names equal without case', () => {
    const file = fc.record({
      name: fc.string({ minLength: 1, maxLength: 6 }),
      content: fc.string({ maxLength: 12 }),
    });
    fc.assert(
      fc.property(fc.array(file, { maxLength: 5 }), (files) => {
        const result = checkAttachments(files, LIMITS);
        if (!result.ok) return;
        expect(result.files.length).toBeLessThanOrEqual(LIMITS.maxFiles);
        expect(result.totalBytes).toBeLessThanOrEqual(LIMITS.maxTotalBytes);
        for (const f of result.files) expect(f.bytes).toBeLessThanOrEqual(LIMITS.maxFileBytes);
        const folded = result.files.map((f) => f.name.normalize('NFC').toLowerCase());
        expect(new Set(folded).size).toBe(folded.length);
      }),
      { numRuns: 1000 },
    );
  });
});

describe('attachmentPlaceholder', () => {
  it('names the size and digest, never the content', () => {
    expect(attachmentPlaceholder(12, 'ab'.repeat(32))).toBe(
      `[attachment content omitted: 12 bytes, sha256 ${'ab'.repeat(32)}]`,
    );
  });
});
