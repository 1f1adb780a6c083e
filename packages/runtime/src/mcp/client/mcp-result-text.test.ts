import { createRedactor } from '@colloquy/core/internal';
import { describe, expect, it } from 'vitest';
import { fitResultText, mcpResultText } from './mcp-result-text.js';

describe('mcpResultText', () => {
  it('joins text blocks and names binary blocks without their bytes', () => {
    const text = mcpResultText({
      content: [
        { type: 'text', text: 'one' },
        { type: 'image', data: 'AAAA', mimeType: 'image/png' },
        { type: 'resource_link', uri: 'file:///a.txt', name: 'a' },
      ],
    });
    expect(text).toBe(
      'one\n[image (image/png) left out: binary content is not shown]\n[resource link file:///a.txt (a)]',
    );
  });

  it('falls back to the structured content as JSON', () => {
    expect(mcpResultText({ content: [], structuredContent: { total: 3 } })).toBe('{"total":3}');
  });
});

describe('fitResultText', () => {
  const redact = createRedactor(['hunter2-secret']);

  it('keeps a short text whole and redacts configured secrets', () => {
    expect(fitResultText('the key is hunter2-secret', 100, redact)).toEqual({
      text: 'the key is [REDACTED]',
      truncated: false,
    });
  });

  it('cuts a long text to the limit and says how long it was', () => {
    const { text, truncated } = fitResultText('x'.repeat(10 * 1024 * 1024), 1000, redact);
    expect(truncated).toBe(true);
    expect(text.startsWith('x'.repeat(1000))).toBe(true);
    expect(text).toContain(
      'it had 10,485,760 characters and only the first 1,000 are shown (mcp.maxResultChars)',
    );
    expect(text.length).toBeLessThan(1300);
  });

  it('never cuts between the halves of a surrogate pair', () => {
    const { text } = fitResultText(`${'a'.repeat(9)}😀tail`, 10, redact);
    expect(text.startsWith(`${'a'.repeat(9)}\n`)).toBe(true);
  });
});
