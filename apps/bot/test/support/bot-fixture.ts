import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ChannelCapabilities, Logger } from '@colloquy/core';
import {
  createMemoryChannel,
  createScriptedModel,
  type MemoryChannel,
  type ScriptedModel,
  type ScriptFn,
} from '@colloquy/testkit';
import { type Bot, startBot } from '../../src/bot/start-bot.js';
import { loadBotConfig } from '../../src/config/load-config.js';

/** A bot started in-process with a memory channel and a scripted model, in a temp state dir. */
export interface BotFixture {
  bot: Bot;
  channel: MemoryChannel;
  model: ScriptedModel;
  stateDir: string;
  /** Sends a message as `sender` in a direct chat and returns the texts the bot sent back for it. */
  say(text: string, sender?: string): Promise<string[]>;
  close(): Promise<void>;
}

/** Options of {@link startBotFixture}. */
export interface BotFixtureOptions {
  /** Config file content (an object written as JSON). Gateway port 0 and no web chat are added. */
  config?: Record<string, unknown>;
  /** The scripted model's behaviour. Default: echo. */
  script?: ScriptFn;
  /** The memory channel's id. Default `telegram` (so `app.owners.telegram` applies). */
  channelId?: string;
  /** The memory channel's capabilities (e.g. a small `maxTextLength`). Default the memory channel's. */
  capabilities?: Partial<ChannelCapabilities>;
  /** No model at all. */
  noModel?: boolean;
  /** The environment the config is loaded with (e.g. for `bearerTokenEnv`). Default empty. */
  env?: Record<string, string>;
  /** The bot's logger. Default silent. */
  logger?: Logger;
  /** How long `say` waits for the run, then for the session to go idle. Default 10,000 ms each. */
  waitMs?: number;
}

/**
 * Starts the real bot assembly (`startBot`: SQLite store, session tools, slash commands, gateway on
 * a free port) with a memory channel standing in for a platform.
 */
export async function startBotFixture(options: BotFixtureOptions = {}): Promise<BotFixture> {
  const dir = mkdtempSync(join(tmpdir(), 'colloquy-bot-'));
  const input = options.config ?? {};
  const file = join(dir, 'colloquy.json5');
  const channelsInput = (input.channels ?? {}) as Record<string, unknown>;
  writeFileSync(
    file,
    JSON.stringify({
      ...input,
      gateway: { port: 0, ...(input.gateway as object) },
      channels: { ...channelsInput, webchat: { enabled: false } },
      ...(options.noModel
        ? {}
        : { agents: { defaults: { model: 'scripted/test' }, ...(input.agents as object) } }),
    }),
  );
  const loaded = await loadBotConfig({
    configFile: file,
    stateDir: join(dir, 'state'),
    env: options.env ?? {},
    baseDir: dir,
  });
  if (!loaded.ok) throw new Error(`fixture config invalid: ${JSON.stringify(loaded.issues)}`);
  const model = createScriptedModel(options.script ?? ((request) => `echo: ${lastText(request.messages)}`));
  const channel = createMemoryChannel({
    id: options.channelId ?? 'telegram',
    ...(options.capabilities ? { capabilities: options.capabilities } : {}),
  });
  const bot = await startBot({
    config: loaded.config,
    plugins: [channel],
    ...(options.logger ? { logger: options.logger } : {}),
    models: (ref) => (ref.startsWith('scripted/') ? { provider: model, modelId: ref.slice(9) } : undefined),
  });
  return {
    bot,
    channel,
    model,
    stateDir: join(dir, 'state'),
    async say(text, sender = 'user-1') {
      const inbound = channel.toInbound({ text, sender: { id: sender, name: sender } });
      const before = channel.sent.length;
      const outcome = await bot.runtime.receive(inbound);
      if (outcome.action === 'queued') {
        const waitMs = options.waitMs ?? 10_000;
        await bot.runtime.gateway.call('agent.wait', { runId: outcome.runId, timeoutMs: waitMs });
        await waitIdle(bot, outcome.sessionKey, waitMs);
      }
      return channel.sent.slice(before).map((m) => m.text);
    },
    async close() {
      await bot.stop({ drainMs: 200 });
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function waitIdle(bot: Bot, key: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const status = await bot.runtime.gateway.call('session.status', { key });
    if (status.activeRunId === undefined && status.queueDepth === 0) return;
    if (Date.now() > deadline) throw new Error(`session ${key} still busy`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

function lastText(messages: readonly { role: string; content: unknown }[]): string {
  const last = [...messages].reverse().find((m) => m.role === 'user');
  if (!last) return '';
  if (typeof last.content === 'string') return last.content;
  return (last.content as { type: string; text?: string }[])
    .filter((b) => b.type === 'text')
    .map((b) => b.text)
    .join('');
}

/** Polls until `check` returns a value (not undefined), failing after `timeoutMs`. */
export async function eventually<T>(
  check: () => T | undefined | Promise<T | undefined>,
  timeoutMs = 5000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`eventually: not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
