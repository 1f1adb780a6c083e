import { ColloquyError, formatIssues, silentLogger } from '@colloquy/core';
import { approvePairing, listPairings, type PairingRecord, revokePairing } from '@colloquy/core/gateway';
import type { Store } from '@colloquy/core/store';
import { loadBotConfig } from '../../config/load-config.js';
import { timeAgo } from '../../format/units.js';
import { openBotStore } from '../../state/open-store.js';
import { type CliIo, writeLines } from '../cli-io.js';
import { CLI } from '../cli-name.js';
import { parseFlags } from '../parse-flags.js';

const CHANNELS = ['telegram', 'whatsapp'] as const;
type PairingChannel = (typeof CHANNELS)[number];

/**
 * `colloquy pairing list [channel]`, `approve <channel> <code>`, `revoke <channel> <user> [--account id]`:
 * who may message the bot in direct chats under `dmPolicy: "pairing"`. Works on the bot's Store
 * (SQLite in the state directory, or `storage.url`), so the bot need not run, and a running bot
 * sees changes on the peer's next message.
 *
 * @param args - arguments after `pairing`
 * @param io - streams and environment
 * @returns the exit code
 * @throws ColloquyError `INVALID_ARGUMENT` for a wrong channel, code or usage
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
  const store = await openBotStore(loaded.config, silentLogger);
  try {
    if (action === 'list') return await list(store, channels, values.json === true, io);
    if (!subject) throw new ColloquyError('INVALID_ARGUMENT', USAGE);
    const channel = channels[0]!;
    if (action === 'approve') {
      const approved = await approvePairing(store, channel, subject);
      writeLines(io.out, values.json ? JSON.stringify(approved) : `Approved ${who(approved)} on ${channel}.`);
      return 0;
    }
    const revoked = await revokePairing(store, channel, values.account ?? 'default', subject);
    writeLines(
      io.out,
      revoked ? `Revoked ${subject} on ${channel}.` : `${subject} was not approved on ${channel}.`,
    );
    return revoked ? 0 : 1;
  } finally {
    await store.close();
  }
}

async function list(
  store: Store,
  channels: readonly PairingChannel[],
  json: boolean,
  io: CliIo,
): Promise<number> {
  const all: Record<string, unknown> = {};
  const now = Date.now();
  for (const channel of channels) {
    const state = await listPairings(store, channel, now);
    all[channel] = state;
    if (json) continue;
    writeLines(io.out, `${channel}:`);
    writeLines(io.out, `  pending: ${state.pending.length === 0 ? 'none' : ''}`.trimEnd());
    for (const p of state.pending) {
      writeLines(io.out, `    ${p.code}  ${who(p)}  asked ${timeAgo(p.createdAt, now)}`);
    }
    writeLines(io.out, `  approved: ${state.approved.length === 0 ? 'none' : ''}`.trimEnd());
    for (const a of state.approved) {
      writeLines(io.out, `    ${who(a)}  approved ${timeAgo(a.approvedAt ?? a.createdAt, now)}`);
    }
  }
  if (json) writeLines(io.out, JSON.stringify(all, null, 2));
  return 0;
}

const USAGE = `Usage: ${CLI} pairing list [telegram|whatsapp] | approve <telegram|whatsapp> <code> | revoke <telegram|whatsapp> <userId> [--account id]`;

function checkChannel(channel: string | undefined): PairingChannel {
  if (channel === 'telegram' || channel === 'whatsapp') return channel;
  throw new ColloquyError(
    'INVALID_ARGUMENT',
    `Pairing works for telegram and whatsapp${channel ? `, not "${channel}"` : ''}. ${USAGE}`,
  );
}

function who(pairing: PairingRecord): string {
  const username = pairing.meta?.username;
  const name = typeof username === 'string' ? `@${username}` : pairing.displayName;
  return name ? `${name} (${pairing.peerId})` : pairing.peerId;
}
