import { dirname, join, resolve } from 'node:path';
import type { ChannelPlugin } from '@colloquy/core';
import type { WebChatPlugin } from '@colloquy/plugin-webchat';
import type { BotConfig } from '../config/load-config.js';
import { STATE_FILES } from '../state/state-dir.js';

/** The channel plugins of one bot: all of them, and the web chat's own handle for its URL. */
export interface ChannelSet {
  plugins: ChannelPlugin[];
  webchat: WebChatPlugin | undefined;
}

/** Secrets the plugins need, kept in the state directory. */
export interface ChannelSecrets {
  cookieSecret: string;
  adminToken: string;
}

/**
 * Creates the channel plugins the config turns on. Platform plugins are imported only when their
 * section is present, so a web-chat-only bot never loads grammY, discord.js, Bolt or Baileys.
 *
 * @param config - the loaded config
 * @param secrets - the web chat cookie secret and the admin token
 * @param health - what is wrong with this instance, for the web chat's `/healthz`
 * @returns the plugins
 * @throws ColloquyError `CONFIG_INVALID` from a plugin factory when its options are wrong
 */
export async function createChannelPlugins(
  config: BotConfig,
  secrets: ChannelSecrets,
  health: () => readonly string[] = () => [],
): Promise<ChannelSet> {
  const plugins: ChannelPlugin[] = [];
  let webchat: WebChatPlugin | undefined;
  const section = config.webchat;
  if (section.enabled) {
    const { createWebChatPlugin } = await import('@colloquy/plugin-webchat');
    webchat = createWebChatPlugin({ config: section, ...secrets, health });
    plugins.push(webchat);
  }
  const { telegram, discord, slack, whatsapp } = config.platforms;
  if (telegram !== undefined) {
    const { createTelegramPlugin } = await import('@colloquy/plugin-telegram');
    plugins.push(
      createTelegramPlugin({ config: telegram, stateDir: join(config.stateDir, STATE_FILES.telegram) }),
    );
  }
  if (discord !== undefined) {
    const { createDiscordPlugin } = await import('@colloquy/plugin-discord');
    plugins.push(createDiscordPlugin({ config: discord }));
  }
  if (slack !== undefined) {
    const { createSlackPlugin } = await import('@colloquy/plugin-slack');
    plugins.push(createSlackPlugin({ config: slack }));
  }
  if (whatsapp?.enabled) {
    const { createWhatsAppPlugin } = await import('@colloquy/plugin-whatsapp');
    plugins.push(createWhatsAppPlugin({ config: whatsapp, stateDir: whatsappStateDir(config) }));
  }
  return { plugins, webchat };
}

/**
 * Where WhatsApp keeps its link and LID map: its `stateDir` setting (relative to the config file),
 * else `whatsapp/` in the state directory.
 *
 * @param config - the loaded config
 * @returns the directory
 */
export function whatsappStateDir(config: BotConfig): string {
  const stateDir = config.platforms.whatsapp?.stateDir;
  if (stateDir !== undefined) return resolve(config.file ? dirname(config.file) : config.baseDir, stateDir);
  return join(config.stateDir, STATE_FILES.whatsapp);
}
