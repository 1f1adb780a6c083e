import type { Dialect } from '../dialect.js';
import type { TokenWriter } from '../token-writer.js';
import { guardFenceRuns, markdownDialect } from './markdown-dialect.js';

/**
 * The length a Slack message is cut at. Slack accepts up to 40,000 characters in `text` but folds
 * anything past about 4,000 behind "Show more", so replies are split there.
 */
export const SLACK_TEXT_LIMIT = 4000;

const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;' };

/** Writes `&`, `<` and `>` as the entities Slack requires; each entity stays whole across a cut. */
function writeEntities(w: TokenWriter, text: string): void {
  let run = '';
  for (const ch of text) {
    const entity = ENTITIES[ch];
    if (entity === undefined) {
      run += ch;
      continue;
    }
    w.text(run);
    run = '';
    w.atom(entity);
  }
  w.text(run);
}

/**
 * Slack's mrkdwn: `*bold*`, `_italic_`, `~strike~`, inline code in single backticks, code blocks in
 * triple backticks (no language), `> quotes`, and links as `<url|text>`. Slack has no headings,
 * tables or list syntax: headings are bold lines, tables are laid out as text, lists keep `-` and
 * numbers as text. `&`, `<` and `>` are written as entities everywhere (code and `plain` messages
 * included), so text the model writes never becomes a mention (`<@U123>`, `<!channel>`) or a link
 * Slack did not render from markdown. mrkdwn has no backslash escapes: other literal characters stay as written, and a literal
 * run of three backticks or tildes (also one that meets markup or other text) is broken with a
 * zero-width space so it cannot open a block.
 */
export const slackMrkdwn: Dialect = markdownDialect({
  name: 'slack-mrkdwn',
  limit: SLACK_TEXT_LIMIT,
  strong: '*',
  emphasis: '_',
  strike: '~',
  headingLevels: 0,
  links: 'angle',
  codeLanguage: false,
  codeSpan: 'single',
  tables: 'text',
  rule: '───',
  numberGuard: '',
  escape: (w, text) => writeEntities(w, guardFenceRuns(w, text)),
  verbatim: writeEntities,
});
