import { ColloquyError, formatIssues } from '@colloquy/core';
import { pairingStateDir } from '../../bot/channel-plugins.js';
import { loadBotConfig } from '../../config/load-config.js';
import { timeAgo } from '../../format/units.js';
import { type CliIo, writeLines } from '../cli-io.js';
import { parseFlags } from '../parse-flags.js';

const CHANNELS = ['telegram', 'whatsapp'] as const;
type PairingChannel = (typeof CHANNELS)[number];

/**
 * `colloquy pairing list [channel]`, `approve <channel> <code>`, `revoke <channel> <user> [--account id]`:
 * who may message the bot in direct chats under `dmPolicy: "pairing"`. Works on the state
 * directory's pairing files, so the bot need not run (a running bot sees changes at once).
 *
 * @param args - arguments after `pairing`
 * @param io - streams and environment
 * @returns the exit code
 * @throws ColloquyError `INVALID_ARGUMENT` for a wrong channel, code or usage; `NOT_SUPPORTED` for a
 *   revoke the channel cannot do
 */
export async function pairingCommand(args: readonly string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseFlags(
    args,
    {
      config: { type: 'string', short: 'c' },
      'state-dir': { type: 'string' },
      account: { type: 'string' },
      json: { type: 'boolean' },
    },
    'pairing',
  );
  const [action, channelArg, subject] = positionals;
  if (action !== 'list' && action !== 'approve' && action !== 'revoke') {
    throw new ColloquyError('INVALID_ARGUMENT', USAGE);
  }
  const channels: PairingChannel[] =
    channelArg === undefined && action === 'list' ? [...CHANNELS] : [checkChannel(channelArg)];
  const loaded = await loadBotConfig({
    ...(values.config ? { configFile: values.config } : {}),
    ...(values['state-dir'] ? { stateDir: values['state-dir'] } : {}),
    env: io.env,
  });
  if (!loaded.ok) throw new ColloquyError('CONFIG_INVALID', formatIssues(loaded.issues));
  const config = loaded.config;

  if (action === 'list') {
    const all: Record<string, unknown> = {};
    for (const channel of channels) {
      const dir = pairingStateDir(config, channel);
      const state =
        channel === 'telegram'
          ? await (await import('@colloquy/plugin-telegram')).listTelegramPairings(dir)
          : await (await import('@colloquy/plugin-whatsapp')).listWhatsAppPairings(dir);
      all[channel] = state;
      if (values.json) continue;
      const now = Date.now();
      writeLines(io.out, `${channel}:`);
      const pending = state.pending as { code: string; name?: string; createdAt: number }[];
      const approved = state.approved as { name?: string; approvedAt: number }[];
      writeLines(io.out, `  pending: ${pending.length === 0 ? 'none' : ''}`.trimEnd());
      for (const p of pending) {
        writeLines(io.out, `    ${p.code}  ${who(p)}  asked ${timeAgo(p.createdAt, now)}`);
      }
      writeLines(io.out, `  approved: ${approved.length === 0 ? 'none' : ''}`.trimEnd());
      for (const a of approved) writeLines(io.out, `    ${who(a)}  approved ${timeAgo(a.approvedAt, now)}`);
    }
    if (values.json) writeLines(io.out, JSON.stringify(all, null, 2));
    return 0;
  }

  const channel = channels[0]!;
  const dir = pairingStateDir(config, channel);
  if (!subject) throw new ColloquyError('INVALID_ARGUMENT', USAGE);
  if (action === 'approve') {
    const approved =
      channel === 'telegram'
        ? await (await import('@colloquy/plugin-telegram')).approveTelegramPairing(dir, subject)
        : await (await import('@colloquy/plugin-whatsapp')).approveWhatsAppPairing(dir, subject);
    writeLines(io.out, values.json ? JSON.stringify(approved) : `Approved ${who(approved)} on ${channel}.`);
    return 0;
  }
  if (channel !== 'telegram') {
    throw new ColloquyError(
      'NOT_SUPPORTED',
      'WhatsApp approvals cannot be revoked from the CLI yet; remove the person from pairing.json in the WhatsApp state directory while the bot is stopped.',
    );
  }
  const { revokeTelegramPairing } = await import('@colloquy/plugin-telegram');
  const revoked = await revokeTelegramPairing(dir, values.account ?? 'default', subject);
  writeLines(
    io.out,
    revoked ? `Revoked ${subject} on telegram.` : `${subject} was not approved on telegram.`,
  );
  return revoked ? 0 : 1;
}

const USAGE =
  'Usage: colloquy pairing list [telegram|whatsapp] | approve <telegram|whatsapp> <code> | revoke telegram <userId> [--account id]';

function checkChannel(channel: string | undefined): PairingChannel {
  if (channel === 'telegram' || channel === 'whatsapp') return channel;
  throw new ColloquyError(
    'INVALID_ARGUMENT',
    `Pairing works for telegram and whatsapp${channel ? `, not "${channel}"` : ''}. ${USAGE}`,
  );
}

function who(person: { name?: string; username?: string; userId?: string; peerId?: string }): string {
  const id = person.userId ?? person.peerId ?? '?';
  const name = person.username ? `@${person.username}` : person.name;
  return name ? `${name} (${id})` : id;
}
