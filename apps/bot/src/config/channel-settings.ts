import type { ConfigIssue } from '@colloquy/core';
import { describeConfigValue } from '@colloquy/core/internal';

/**
 * Settings every `channels.<id>` section may carry beside the plugin's own: the runtime reads them
 * from the core config, and the plugin's schema never sees them.
 * - `progress` (boolean, default true): sub-agent progress (typing, a status line) in that
 *   channel's chats.
 */
const RUNTIME_CHANNEL_SETTINGS = ['progress'] as const;

/**
 * The channel sections as their plugins validate them: the runtime's own settings
 * ({@link RUNTIME_CHANNEL_SETTINGS}) are checked here and left out.
 *
 * @param channels - the raw `channels` object of the config
 * @param issues - where a wrong value is reported (`channels.telegram.progress: expected true or false`)
 * @returns the sections without the runtime's settings
 */
export function pluginSections(
  channels: Record<string, unknown>,
  issues: ConfigIssue[],
): Record<string, unknown> {
  const sections: Record<string, unknown> = {};
  for (const [id, section] of Object.entries(channels)) {
    if (typeof section !== 'object' || section === null || Array.isArray(section)) {
      sections[id] = section;
      continue;
    }
    const own: Record<string, unknown> = { ...section };
    for (const name of RUNTIME_CHANNEL_SETTINGS) {
      const value = own[name];
      delete own[name];
      if (value !== undefined && typeof value !== 'boolean') {
        const path = `channels.${id}.${name}`;
        issues.push({ path, expected: 'true or false', got: describeConfigValue(path, value) });
      }
    }
    sections[id] = own;
  }
  return sections;
}
