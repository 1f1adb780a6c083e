import type { ChannelState } from './channel-state.js';
import type { WhatsAppConnection } from './connection.js';
import { normalizePeerEntry } from './jid.js';

const defaultPairingMessage = (code: string): string =>
  `Hi! This assistant only answers people its owner has approved.\nYour pairing code: ${code}\nSend it to the owner; it expires in one hour.`;

/**
 * Who may talk to the bot: the DM policy (open, allowlist, or pairing, where newcomers get a code the
 * owner approves) and mention gating in groups.
 */
export class DmAccess {
  private readonly allowFrom: Set<string>;

  constructor(
    private readonly shared: ChannelState,
    private readonly connection: WhatsAppConnection,
  ) {
    this.allowFrom = new Set(
      shared.config.allowFrom.map(normalizePeerEntry).filter((e): e is string => e !== undefined),
    );
  }

  /** Whether the bot answers in a group only when mentioned or replied to. */
  requiresMention(groupJid: string): boolean {
    const { config } = this.shared;
    return (
      config.groups[groupJid]?.requireMention ??
      config.groups['*']?.requireMention ??
      config.requireMentionByDefault
    );
  }

  /** The DM policy: open, allowlist, or pairing (newcomers get a code the owner approves). */
  async mayTalk(peerId: string, jid: string, name: string | undefined): Promise<boolean> {
    const { config, peers, ctx, log, accountId } = this.shared;
    const policy = config.dmPolicy;
    if (policy === 'open') return true;
    const aliases = new Set([peerId, ...(peers?.aliasesOf(jid) ?? []).map((j) => normalizePeerEntry(j))]);
    for (const alias of aliases) if (alias && this.allowFrom.has(alias)) return true;
    if (policy === 'allowlist' || !ctx) {
      log.debug({ peerId }, 'direct message from someone not in allowFrom ignored');
      return false;
    }
    const pairing = ctx.pairing;
    if (await pairing.isApproved(accountId, peerId)) return true;
    const { record, created } = await pairing.request({
      accountId,
      peerId,
      meta: { jid },
      ...(name !== undefined ? { displayName: name } : {}),
    });
    if (record.status === 'approved') return true;
    const code = record.code ?? '';
    if (created) {
      log.info(
        { peerId, code },
        'WhatsApp pairing requested; approve it with `colloquy pairing approve whatsapp <code>`',
      );
      await this.sendPairingCode(jid, code);
    }
    return false;
  }

  private async sendPairingCode(jid: string, code: string): Promise<void> {
    const { options, log, sentIds, sentStore } = this.shared;
    const text = (options.pairingMessage ?? defaultPairingMessage)(code);
    const sock = this.connection.sock;
    if (!sock) return;
    const sent = await sock.sendMessage(jid, { text }).catch((error: unknown) => {
      log.warn({ err: (error as Error).message }, 'could not send the pairing code');
      return undefined;
    });
    if (sent?.key.id) {
      sentIds.set(sent.key.id, true);
      sentStore?.record(sent.key.id, sent.message);
    }
  }
}
