import type { Dialect } from '../dialect.js';
import { backslashEscaper, guardFenceRuns, markdownDialect } from './markdown-dialect.js';

/** Discord's longest message `content`. */
export const DISCORD_MESSAGE_LIMIT = 2000;

/**
 * Discord markdown: `**bold**`, `*italic*`, `~~strike~~`, code, fenced code with its language,
 * `#`..`###` headings (deeper ones bold), `> quotes`, lists, masked links for http(s). Tables become
 * an aligned grid in a code block, or one line per row when wider than 60 characters. Literal
 * markup characters are backslash-escaped.
 */
export const discord: Dialect = markdownDialect({
  name: 'discord',
  limit: DISCORD_MESSAGE_LIMIT,
  strong: '**',
  emphasis: '*',
  strike: '~~',
  headingLevels: 3,
  links: 'masked',
  codeLanguage: true,
  codeSpan: 'fit',
  tables: 'text',
  rule: '──────────',
  numberGuard: '\\',
  // `<` stays: `<@id>` mentions and `<url>` links are Discord syntax the model may use.
  escape: backslashEscaper('[]'),
});

/** WhatsApp's default chunk length (WhatsApp itself allows far longer messages). */
export const WHATSAPP_TEXT_LIMIT = 4000;

/**
 * WhatsApp formatting: `*bold*`, `_italic_`, `~strike~`, inline code in single backticks, code
 * blocks in triple backticks (no language), `> quotes` and `-` lists. WhatsApp has no links, headings or escapes: links read
 * `text (url)`, headings are bold lines, tables are text and literal characters stay as written.
 */
export const whatsapp: Dialect = markdownDialect({
  name: 'whatsapp',
  limit: WHATSAPP_TEXT_LIMIT,
  strong: '*',
  emphasis: '_',
  strike: '~',
  headingLevels: 0,
  links: 'text',
  codeLanguage: false,
  codeSpan: 'single',
  tables: 'text',
  rule: '───',
  // No escapes, and a number reads the same as text or as a list item.
  numberGuard: '',
  // WhatsApp has no escapes: a zero-width space keeps a literal ``` (or ~~~) from opening a block.
  escape: (w, text) => w.text(guardFenceRuns(w, text)),
});

/** The web chat's longest message. */
export const COMMONMARK_TEXT_LIMIT = 16_000;

/**
 * CommonMark with GitHub tables and strikethrough, normalised, for renderers that parse markdown
 * themselves (the web chat page). Literal markup characters are backslash-escaped.
 */
export const commonmark: Dialect = markdownDialect({
  name: 'commonmark',
  limit: COMMONMARK_TEXT_LIMIT,
  strong: '**',
  emphasis: '*',
  strike: '~~',
  headingLevels: 6,
  links: 'masked',
  codeLanguage: true,
  codeSpan: 'fit',
  tables: 'gfm',
  rule: '---',
  numberGuard: '\\',
  escape: backslashEscaper('[]<'),
});

/** The default chunk length of plain text channels (consoles, SMS gateways, logs). */
export const PLAIN_TEXT_LIMIT = 4000;

/**
 * Plain text, for channels that show characters as they are (a console, an SMS gateway, a log):
 * no markup and no escapes. Bold, italic and strike become their text; headings are lines of their
 * own; links read `text (url)`; lists keep `-` and numbers, quotes `>`; code blocks stay in fences
 * and inline code in backticks, so code still stands out; tables are laid out as text.
 */
export const plain: Dialect = markdownDialect({
  name: 'plain',
  limit: PLAIN_TEXT_LIMIT,
  strong: '',
  emphasis: '',
  strike: '',
  headingLevels: 0,
  links: 'text',
  codeLanguage: false,
  codeSpan: 'single',
  tables: 'text',
  rule: '───',
  numberGuard: '',
  escape: (w, text) => w.text(text),
});
