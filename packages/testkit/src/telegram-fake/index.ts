// @colloquy/testkit/telegram-fake: a Telegram Bot API fake on 127.0.0.1 for grammY (point the bot's
// `client.apiRoot` at `fake.apiRoot`), and the HTML checker it applies to every formatted send.

export { checkTelegramHtml, type HtmlCheck } from '@colloquy/markdown/testing';
export type { PlatformOutage } from '../fakes/platform-outage.js';
export { type ApiCall, type FakeBotInfo, FakeTelegram, type SentMessage } from './fake-telegram.js';
