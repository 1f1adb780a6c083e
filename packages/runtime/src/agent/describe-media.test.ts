import { describe, expect, it } from 'vitest';
import { describeMedia } from './describe-media.js';

describe('describeMedia', () => {
  it('writes one line per attachment with its metadata', async () => {
    expect(
      describeMedia([
        {
          kind: 'image',
          fileName: 'chart.png',
          mimeType: 'image/png',
          size: 2048,
          caption: 'weekly "chart"',
          ref: 'u1',
        },
        { kind: 'voice', mimeType: 'audio/ogg', durationSeconds: 3 },
        { kind: 'document' },
      ]),
    ).toBe(
      [
        '[image: chart.png (image/png, 2048 bytes) "weekly \\"chart\\"" ref=u1]',
        '[voice: (audio/ogg, 3 s)]',
        '[document:]',
      ].join('\n'),
    );
  });

  it('is empty without attachments', async () => {
    expect(describeMedia(undefined)).toBe('');
    expect(describeMedia([])).toBe('');
  });
});
