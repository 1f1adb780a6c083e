import { describe, expect, it } from 'vitest';
import { stripBotMention, withAttachmentLines } from './inbound.js';

describe('stripBotMention', () => {
  it('removes the bot mention in both forms and keeps other mentions', () => {
    expect(stripBotMention('<@42> hello <@!42> <@7>', '42')).toBe('hello <@7>');
    expect(stripBotMention('hey <@420> there', '42')).toBe('hey <@420> there');
  });
});

describe('withAttachmentLines', () => {
  it('adds one line per attachment with type, size, caption and link', () => {
    const text = withAttachmentLines('see this', [
      {
        kind: 'image',
        mimeType: 'image/png',
        fileName: 'a.png',
        size: 10,
        ref: 'https://cdn/a.png',
        caption: 'cap',
      },
      { kind: 'sticker', fileName: 'wave', ref: 'https://cdn/s.png' },
    ]);
    expect(text).toBe(
      'see this\n[attachment: a.png (image/png, 10 bytes) "cap": https://cdn/a.png]\n[sticker: wave (sticker): https://cdn/s.png]',
    );
  });

  it('leaves text alone without attachments and stands alone without text', () => {
    expect(withAttachmentLines('plain', [])).toBe('plain');
    expect(withAttachmentLines('', [{ kind: 'document', fileName: 'x.pdf', ref: 'u' }])).toBe(
      '[attachment: x.pdf (document): u]',
    );
  });
});
