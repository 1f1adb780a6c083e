import type { StoredMessage } from '../interfaces/records.js';
import { mapWithConcurrency } from './concurrency.js';
import { lineageOf, type ToolScope } from './tool-context.js';
import { mayAccess } from './visible-scope.js';

const LINEAGE_CONCURRENCY = 4;

/**
 * The messages as the requester may read them: a message's provenance names the session it came
 * from (`sourceSessionKey`, and that session's run in `sourceRunId`): a sender, a sub-agent
 * announcing its result, a watched session. Where the requester may not see that session, both
 * are left out, so reading a visible session never names one the guard hides.
 *
 * The spec is silent on provenance (sections 3 and 11 settle only the target of a read); this
 * takes the reading that leaks nothing: the guard (`checkSessionAccess`, action `list`) decides
 * for each source as for any key a tool shows, and a source that no longer exists loses its key
 * the same way, so a page cannot tell a hidden source from a deleted one. The rest of the
 * provenance (its kind, the tool, the hop count) stays.
 *
 * @param scope - the requester
 * @param messages - messages as read from the gateway
 * @returns the same messages, those with a hidden or missing source copied without its key and run
 */
export async function withoutHiddenSources(
  scope: ToolScope,
  messages: readonly StoredMessage[],
): Promise<StoredMessage[]> {
  const sources = [
    ...new Set(
      messages.flatMap((m) => (m.provenance?.sourceSessionKey ? [m.provenance.sourceSessionKey] : [])),
    ),
  ];
  if (sources.length === 0) return [...messages];
  const visible = await visibleSources(scope, sources);
  return messages.map((message) => {
    const provenance = message.provenance;
    if (provenance?.sourceSessionKey === undefined || visible.has(provenance.sourceSessionKey))
      return message;
    const { sourceSessionKey: _key, sourceRunId: _run, ...kept } = provenance;
    return { ...message, provenance: kept };
  });
}

/** The keys among `keys` of sessions that exist and that the guard lets the requester see. */
async function visibleSources(scope: ToolScope, keys: readonly string[]): Promise<Set<string>> {
  const { sessions } = await scope.options.gateway.call('sessions.list', {
    keys: [...keys],
    includeArchived: true,
  });
  const visible = new Set<string>();
  await mapWithConcurrency(sessions, LINEAGE_CONCURRENCY, async (session) => {
    if (mayAccess(scope, session.key, await lineageOf(scope, session), 'list')) visible.add(session.key);
  });
  return visible;
}
