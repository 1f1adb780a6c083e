// @colloquy/markdown/testing: checks and generators for tests of dialects and chunking.
// No test runner or property library is imported here: bring your own (vitest, fast-check).

export { checkMessages, openFenceAtEnd, readMessage } from './check-messages.js';
export { MARKDOWN_BLOCKS, MARKDOWN_PIECES } from './pieces.js';
export { checkTelegramHtml, type HtmlCheck } from './telegram-html-check.js';
