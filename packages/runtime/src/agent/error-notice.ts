import type { RunRecord } from '@colloquy/core/gateway';
import { OUTAGE_NOTICE } from './provider-outage.js';
import type { TurnOutcome } from './turn-outcome.js';

/** What a chat user who is not the owner reads when a run fails: the details go to the owner and the logs. */
export const GUEST_ERROR_NOTICE = 'Sorry, I could not answer just now; the owner has the details.';

/**
 * The notice a failed turn delivers to its chat. Model and configuration failures name internal URLs
 * and config keys, so only the owner (a run started by a message `isOwner` accepted) reads them; others
 * get {@link GUEST_ERROR_NOTICE}. Timeouts carry no internals and are told to everyone. A failure
 * because the model provider is down is told to everyone as {@link OUTAGE_NOTICE}; the owner also
 * reads the error.
 *
 * @param outcome - the turn's outcome (not `done`)
 * @param leader - the turn's first run
 * @returns the text to deliver, or `undefined` when there is none
 */
export function errorNoticeFor(outcome: TurnOutcome, leader: RunRecord): string | undefined {
  if (outcome.status !== 'error' || !outcome.notice) return outcome.notice;
  if (outcome.outage) return startedByOwner(leader) ? `${OUTAGE_NOTICE} (${outcome.error})` : OUTAGE_NOTICE;
  return startedByOwner(leader) ? outcome.notice : GUEST_ERROR_NOTICE;
}

/** True when the run was started by a chat message from the owner (`meta.input.owner`). */
function startedByOwner(run: RunRecord): boolean {
  const input = run.meta?.input;
  return typeof input === 'object' && input !== null && (input as { owner?: unknown }).owner === true;
}
