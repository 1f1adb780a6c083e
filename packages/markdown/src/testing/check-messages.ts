import type { Nodes } from 'mdast';
import type { Dialect } from '../dialect.js';
import { parseMarkdown } from '../parse.js';
import { renderMessages, renderText } from '../render.js';
import { checkTelegramHtml } from './telegram-html-check.js';

/**
 * The code fence left open at the end of `text`, if any: an independent tracker, for tests.
 *
 * @param text - markdown
 * @returns the open fence marker (three or more backticks, or `~~~`), or `undefined` when all are closed
 */
export function openFenceAtEnd(text: string): string | undefined {
  let open: string | undefined;
  for (const line of text.split('\n')) {
    const match = /^(`{3,}|~{3,})(.*)$/.exec(
      line.replace(/^(?:[ \t]*(?:> ?|[-+*] |\d{1,9}[.)] ))*[ \t]*/, ''),
    );
    if (match === null) continue;
    const marker = match[1] as string;
    const rest = match[2] as string;
    if (open === undefined) {
      if (marker[0] === '`' && rest.includes('`')) continue;
      open = marker;
    } else if (rest.trim() === '' && marker[0] === open[0] && marker.length >= open.length) {
      open = undefined;
    }
  }
  return open;
}

/**
 * The text a reader sees in one message of `dialect`, or the reason the app would refuse it.
 * Telegram HTML is parsed strictly; markdown dialects must close every code fence and are read
 * back with a CommonMark parser, except WhatsApp, which shows a message as written (it has no links
 * and no escapes: `[a](b)` in its text reads as those characters), and Slack mrkdwn, which shows a
 * `<url|label>` link as its label and `&lt;` as `<`. Plain text is read as it is.
 */
export function readMessage(
  dialect: Dialect,
  message: string,
  format: 'markdown' | 'plain' = 'markdown',
): { ok: true; text: string } | { ok: false; error: string } {
  if (dialect.name === 'telegram-html') return checkTelegramHtml(message);
  if (format === 'plain') return { ok: true, text: message };
  const fence = openFenceAtEnd(message);
  if (fence !== undefined) return { ok: false, error: `code fence ${fence} left open` };
  if (dialect.name === 'whatsapp') return { ok: true, text: message };
  if (dialect.name === 'slack-mrkdwn') return { ok: true, text: readSlackMrkdwn(message) };
  return { ok: true, text: visibleText(parseMarkdown(message)) };
}

/**
 * The text a reader sees in a markdown tree: an ordered list's numbers are text too, so a message
 * that starts inside a list item (its `2. ` then reads as text) loses nothing against the whole.
 */
function visibleText(node: Nodes): string {
  if ('value' in node) return node.value;
  if (node.type === 'image') return node.alt ?? '';
  if (!('children' in node)) return '';
  if (node.type === 'list' && node.ordered) {
    const start = node.start ?? 1;
    return node.children.map((item, i) => `${start + i}. ${visibleText(item)}`).join('');
  }
  let out = '';
  for (const child of node.children) out += visibleText(child);
  return out;
}

/**
 * Checks the guarantees of `renderMessages` for one input: every message within the limit,
 * non-blank and well-formed on its own, and no text lost (the letters and digits of all messages,
 * in order, are those of the whole rendering).
 *
 * @param dialect - the dialect to check
 * @param text - the model's text
 * @param limit - the message limit
 * @param format - `markdown` (default) or `plain`
 * @returns the problems found; empty when all hold
 */
export function checkMessages(
  dialect: Dialect,
  text: string,
  limit: number,
  format: 'markdown' | 'plain' = 'markdown',
): string[] {
  const problems: string[] = [];
  const messages = renderMessages(text, dialect, { limit, format });
  const seen: string[] = [];
  messages.forEach((message, i) => {
    if (message.length > limit) problems.push(`message ${i} has ${message.length} > ${limit} characters`);
    if (message.trim() === '') problems.push(`message ${i} is blank`);
    const read = readMessage(dialect, message, format);
    if (!read.ok) problems.push(`message ${i}: ${read.error}\n${message}`);
    else seen.push(read.text);
  });
  if (problems.length > 0) return problems;
  const whole = readMessage(dialect, renderText(text, dialect, format), format);
  if (!whole.ok) return [`the whole rendering: ${whole.error}`];
  const letters = dialect.name === 'telegram-html' || format === 'plain' ? squash : lettersOf;
  if (letters(seen.join('')) !== letters(whole.text)) {
    problems.push(`text lost or changed:\n${letters(whole.text)}\n${letters(seen.join(''))}`);
  }
  return problems;
}

/** What Slack shows of mrkdwn: a link's label, and the characters its entities stand for. */
function readSlackMrkdwn(message: string): string {
  return message
    .replace(/<[^|>]*\|([^>]*)>/g, '$1')
    .replace(/&(amp|lt|gt);/g, (_, name: string) => ({ amp: '&', lt: '<', gt: '>' })[name] ?? '');
}

const squash = (text: string): string => text.replace(/\s+/g, '');

/** Letters, digits and symbols beyond ASCII: markdown punctuation may be read differently per message. */
const lettersOf = (text: string): string => text.replace(/[\s!-/:-@[-`{-~]+/g, '');
