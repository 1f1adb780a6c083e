import { describe, expect, it } from 'vitest';
import { renderMessages, renderText } from '../render.js';
import { SLACK_TEXT_LIMIT, slackMrkdwn } from './slack-mrkdwn.js';

const md = (markdown: string): string => renderText(markdown, slackMrkdwn);

describe('the Slack mrkdwn dialect', () => {
  it('writes bold, italic and strike the Slack way, and headings as bold lines', () => {
    expect(md('**b** and *i* and ~~s~~')).toBe('*b* and _i_ and ~s~');
    expect(md('# Title\n\n### **Sub**\n\ntext')).toBe('*Title*\n\n*Sub*\n\ntext');
  });

  it('renders links as <url|text>, with | and > in the target percent-encoded', () => {
    expect(md('see [the docs](https://x.example/a?b=1|2)')).toBe(
      'see <https://x.example/a?b=1%7C2|the docs>',
    );
    expect(md('[a > b](https://x.example)')).toBe('<https://x.example|a &gt; b>');
  });

  it('writes &, < and > as entities in text and code, so model text never mentions anyone', () => {
    expect(md('ping <@U123> & <!channel>')).toBe('ping &lt;@U123&gt; &amp; &lt;!channel&gt;');
    expect(md('`a<b && c>d`')).toBe('`a&lt;b &amp;&amp; c&gt;d`');
    expect(md('```ts\nif (a < b) {}\n```')).toBe('```\nif (a &lt; b) {}\n```');
    expect(renderText('<!channel> as *typed*', slackMrkdwn, 'plain')).toBe('&lt;!channel&gt; as *typed*');
  });

  it('keeps quotes and lists, lays tables out as text and breaks a literal fence', () => {
    expect(md('> quoted\n\n- one\n- two\n\n1. first')).toBe('> quoted\n\n- one\n- two\n\n1. first');
    expect(md('| a | b |\n|---|---|\n| 1 | 2 |')).toBe('```\na | b\n--+--\n1 | 2\n```');
    expect(md('literal \\`\\`\\` fence')).toBe('literal `\u200b`\u200b` fence');
  });

  it('never cuts an entity in two when it splits a long reply', () => {
    const text = `${'x'.repeat(SLACK_TEXT_LIMIT - 2)} <tag> and more`;
    const messages = renderMessages(text, slackMrkdwn);
    expect(messages.length).toBe(2);
    for (const message of messages) {
      expect(message.length).toBeLessThanOrEqual(SLACK_TEXT_LIMIT);
      expect(message).not.toMatch(/&(a|am|l|g)?$/);
    }
    expect(messages.join('')).toContain('&lt;tag&gt;');
  });
});
