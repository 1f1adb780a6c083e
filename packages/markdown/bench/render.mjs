// Parse and renderMessages time per dialect for a short reply, 1 KB and 4 KB of model markdown.
// Run `pnpm bench` after `pnpm build`; it measures the built dist.
import { commonmark, discord, parseMarkdown, renderMessages, telegramHtml, whatsapp } from '../dist/index.js';

/** Targets (issue 22): a short reply, and the whole renderMessages per KB. */
const SHORT_TARGET_MS = 0.02;
const PER_KB_TARGET_MS = 0.4;

const paragraph =
  'Here is **bold** and _italic_ text with a [link](https://example.com/a?b=1&c=2), `code` and a < b. ';
const block = `${paragraph}\n\n- item one\n- item **two**\n  - nested\n\n\`\`\`ts\nconst x = 1;\n\`\`\`\n\n| a | b |\n|---|--:|\n| 1 | 22 |\n\n> quoted *line*\n\n`;

/** About `size` characters of typical model markdown, cut at a line end. */
function sample(size) {
  let text = '## Title\n\n';
  while (text.length < size) text += block;
  return text.slice(0, text.lastIndexOf('\n', size));
}

/** Milliseconds per call in the fastest of 15 batches of about 20 ms each, after a warm-up (load on the machine only adds). */
function time(fn) {
  const warm = performance.now();
  let perBatch = 0;
  while (performance.now() - warm < 100) {
    fn();
    perBatch++;
  }
  perBatch = Math.max(1, Math.round(perBatch / 5));
  const batches = [];
  for (let b = 0; b < 15; b++) {
    const start = performance.now();
    for (let i = 0; i < perBatch; i++) fn();
    batches.push((performance.now() - start) / perBatch);
  }
  batches.sort((x, y) => x - y);
  return batches[0];
}

const inputs = [
  ['short', 'Sure, I can do that.'],
  ['short md', 'Done: **3 files** changed.'],
  ['1 KB', sample(1024)],
  ['4 KB', sample(4096)],
];

const rows = [];
let failed = false;
for (const [name, text] of inputs) {
  const target = name.startsWith('short') ? SHORT_TARGET_MS : (PER_KB_TARGET_MS * text.length) / 1024;
  const parse = time(() => parseMarkdown(text));
  for (const dialect of [telegramHtml, discord, whatsapp, commonmark]) {
    const whole = time(() => renderMessages(text, dialect));
    const ok = whole <= target;
    failed ||= !ok;
    rows.push({
      input: `${name} (${text.length} chars)`,
      dialect: dialect.name,
      'parse ms': parse.toFixed(4),
      'renderMessages ms': whole.toFixed(4),
      'target ms': target.toFixed(3),
      ok: ok ? 'yes' : 'NO',
    });
  }
}
console.table(rows);
if (failed) {
  console.log('Some timings are over target (a loaded machine can cause this: run again alone).');
  process.exitCode = 1;
}
