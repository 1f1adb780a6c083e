import { randomUUID } from 'node:crypto';
import { ColloquyError, isColloquyError, type SessionRecord } from '@colloquy/core';
import type { SessionKind } from '@colloquy/core/gateway';
import { createRedactor, sanitizeHistory, searchSnippet } from '@colloquy/core/internal';
import { SESSION_KINDS, searchTerms } from '@colloquy/core/store';
import { parseSlashCommand } from '../../commands/parse-slash-command.js';
import { MODEL_HELP, MODEL_RESTART_HINT } from '../../config/model-help.js';
import { authorLabel, messageText } from '../../format/render-messages.js';
import { compactCount, timeAgo } from '../../format/units.js';
import { type CliIo, writeLines } from '../cli-io.js';
import { CLI } from '../cli-name.js';
import { connectGateway } from '../connect.js';
import { GATEWAY_FLAGS, parseFlags } from '../parse-flags.js';
import { startProgress } from '../progress.js';
import { renderTable } from '../render-table.js';

/**
 * `colloquy sessions list|history|search|status|send`, over the gateway WebSocket.
 *
 * @param args - arguments after `sessions`
 * @param io - streams and environment
 * @returns the exit code
 * @throws ColloquyError `INVALID_ARGUMENT` for a wrong sub-command or flag
 */
export async function sessionsCommand(args: readonly string[], io: CliIo): Promise<number> {
  const [sub, ...rest] = args;
  switch (sub) {
    case 'list':
    case 'ls':
      return list(rest, io);
    case 'history':
      return history(rest, io);
    case 'search':
      return search(rest, io);
    case 'status':
      return status(rest, io);
    case 'send':
      return send(rest, io);
    default:
      throw new ColloquyError(
        'INVALID_ARGUMENT',
        `Unknown "sessions ${sub ?? ''}". Use: ${CLI} sessions list | history <key> | search <words> | status <key> | send <key> <message>.`,
      );
  }
}

async function list(args: readonly string[], io: CliIo): Promise<number> {
  const { values } = parseFlags(
    args,
    {
      ...GATEWAY_FLAGS,
      kind: { type: 'string', multiple: true },
      limit: { type: 'string' },
      offset: { type: 'string' },
      active: { type: 'string' },
      archived: { type: 'boolean' },
    },
    'sessions list',
  );
  const kinds = kindFlags(values.kind);
  const limit = positiveInt(values.limit, 50, '--limit');
  const offset = wholeNumber(values.offset, 0, '--offset', 0);
  const active = values.active === undefined ? undefined : positiveInt(values.active, 0, '--active');
  const { client } = await connectGateway(connectFlags(values), io);
  try {
    const result = await client.call('sessions.list', {
      limit,
      ...(offset > 0 ? { offset } : {}),
      ...(kinds.length > 0 ? { kinds } : {}),
      ...(active !== undefined ? { activeMinutes: active } : {}),
      ...(values.archived ? { includeArchived: true } : {}),
    });
    if (values.json) {
      writeLines(io.out, JSON.stringify(result, null, 2));
      return 0;
    }
    if (result.sessions.length === 0) {
      writeLines(
        io.out,
        offset > 0
          ? `No sessions past --offset ${offset}.`
          : 'No sessions yet. Open the web chat and say hello.',
      );
      return 0;
    }
    const now = Date.now();
    writeLines(
      io.out,
      renderTable(
        ['KEY', 'KIND', 'CHANNEL', 'STATUS', 'UPDATED', 'TOKENS', 'NAME'],
        result.sessions.map((s) => sessionRow(s, now)),
      ),
    );
    const next = offset + result.sessions.length;
    if (result.total > next || offset > 0) {
      const more = result.total > next ? `; next page: --offset ${next}` : '';
      writeLines(io.out, `(${offset + 1}-${next} of ${result.total}${more})`);
    }
    return 0;
  } finally {
    await client.close();
  }
}

function sessionRow(s: SessionRecord, now: number): string[] {
  return [
    s.key,
    s.kind,
    s.channel ?? s.lastChannel ?? '-',
    s.status ?? 'idle',
    timeAgo(s.updatedAt, now),
    s.usage ? compactCount(s.usage.totalTokens) : '-',
    s.label ?? s.displayName ?? '',
  ];
}

async function history(args: readonly string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseFlags(
    args,
    {
      ...GATEWAY_FLAGS,
      limit: { type: 'string', short: 'n' },
      offset: { type: 'string' },
      tools: { type: 'boolean' },
    },
    'sessions history',
  );
  const [key] = positionals;
  if (!key || positionals.length > 1) {
    throw new ColloquyError(
      'INVALID_ARGUMENT',
      `Usage: ${CLI} sessions history <key> [--limit n] [--offset n] [--tools]`,
    );
  }
  const limit = positiveInt(values.limit, 20, '--limit');
  const offset = wholeNumber(values.offset, 0, '--offset', 0);
  const { client, config } = await connectGateway(connectFlags(values), io);
  try {
    const result = await client
      .call('chat.history', { key, limit, ...(offset > 0 ? { offset } : {}) })
      .catch(explainMissing(key));
    const next = offset + result.messages.length;
    const clean = sanitizeHistory(result.messages, {
      includeTools: values.tools ?? false,
      secrets: config?.core.redaction.secrets ?? [],
    });
    if (values.json) {
      writeLines(
        io.out,
        JSON.stringify(
          {
            sessionKey: result.sessionKey,
            total: result.total,
            ...clean,
            hasMore: next < result.total,
            ...(next < result.total ? { nextOffset: next } : {}),
          },
          null,
          2,
        ),
      );
      return 0;
    }
    writeLines(io.out, `${result.sessionKey}: ${result.total} message${result.total === 1 ? '' : 's'}`);
    for (const message of clean.messages) {
      const at = message.timestamp ? new Date(message.timestamp).toLocaleTimeString() : '';
      writeLines(io.out, `\n[${at}] ${authorLabel(message)}:`, indent(messageText(message) || '(empty)'));
    }
    if (clean.redacted) writeLines(io.out, '\n(secrets were redacted)');
    if (next < result.total) writeLines(io.out, `\n(older messages: --offset ${next})`);
    return 0;
  } finally {
    await client.close();
  }
}

async function search(args: readonly string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseFlags(
    args,
    {
      ...GATEWAY_FLAGS,
      kind: { type: 'string', multiple: true },
      session: { type: 'string' },
      limit: { type: 'string', short: 'n' },
      offset: { type: 'string' },
    },
    'sessions search',
  );
  const query = positionals.join(' ').trim();
  const terms = searchTerms(query);
  if (terms.length === 0) {
    throw new ColloquyError(
      'INVALID_ARGUMENT',
      `Usage: ${CLI} sessions search <words> [--kind k] [--session key] [--limit n] [--offset n]`,
    );
  }
  const kinds = kindFlags(values.kind);
  const limit = wholeNumber(values.limit, 10, '--limit', 1, 50);
  const offset = wholeNumber(values.offset, 0, '--offset', 0);
  const { client, config } = await connectGateway(connectFlags(values), io);
  try {
    const result = await client.call('sessions.search', {
      query,
      limit,
      ...(offset > 0 ? { offset } : {}),
      ...(kinds.length > 0 ? { kinds } : {}),
      ...(values.session ? { keys: [values.session] } : {}),
    });
    const redactor = createRedactor(config?.core.redaction.secrets ?? []);
    const hits = result.hits.map(({ sessionKey, message }) => ({
      sessionKey,
      messageIndex: message.seq - 1,
      role: message.role,
      at: message.timestamp,
      snippet: searchSnippet(message, terms, redactor).snippet,
    }));
    const next = offset + hits.length;
    if (values.json) {
      const more = next < result.total ? { nextOffset: next } : {};
      writeLines(io.out, JSON.stringify({ total: result.total, hits, ...more }, null, 2));
      return 0;
    }
    if (hits.length === 0) {
      writeLines(io.out, `No messages match "${query}"${offset > 0 ? ` past --offset ${offset}` : ''}.`);
      return 0;
    }
    for (const hit of hits) {
      const at = new Date(hit.at).toLocaleString();
      writeLines(io.out, `${hit.sessionKey} #${hit.messageIndex} ${hit.role} [${at}]`, indent(hit.snippet));
    }
    const more = result.total > next ? `; next page: --offset ${next}` : '';
    writeLines(io.out, `\n(${offset + 1}-${next} of ${result.total}${more})`);
    return 0;
  } finally {
    await client.close();
  }
}

/**
 * `sessions status <key> [--changes-since n]`: the session's status and `stateVersion`, and with
 * `--changes-since` the kinds and counts of its changes after that version.
 */
async function status(args: readonly string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseFlags(
    args,
    { ...GATEWAY_FLAGS, 'changes-since': { type: 'string' } },
    'sessions status',
  );
  const [key] = positionals;
  if (!key || positionals.length > 1) {
    throw new ColloquyError('INVALID_ARGUMENT', `Usage: ${CLI} sessions status <key> [--changes-since n]`);
  }
  const raw = values['changes-since'];
  const since = raw === undefined ? undefined : wholeNumber(raw, 0, '--changes-since', 0);
  const { client } = await connectGateway(connectFlags(values), io);
  try {
    const result = await client
      .call('session.status', { key, ...(since !== undefined ? { changesSince: since } : {}) })
      .catch(explainMissing(key));
    const { session, changes } = result;
    if (values.json) {
      writeLines(
        io.out,
        JSON.stringify(
          {
            sessionKey: session.key,
            status: result.status,
            stateVersion: result.stateVersion,
            queueDepth: result.queueDepth,
            ...(changes ? { changes } : {}),
          },
          null,
          2,
        ),
      );
      return 0;
    }
    writeLines(
      io.out,
      `${session.key}: ${result.status}, stateVersion ${result.stateVersion}, ${result.queueDepth} queued`,
    );
    if (changes) {
      const { message, status: runs, patch } = changes.changes;
      const older = changes.truncated ? ` (older than ${changes.fromVersion} not kept)` : '';
      writeLines(
        io.out,
        `Changes since ${since}${older}: ${message} message${message === 1 ? '' : 's'}, ` +
          `${runs} run status change${runs === 1 ? '' : 's'}, ${patch} patch${patch === 1 ? '' : 'es'}`,
      );
    }
    return 0;
  } finally {
    await client.close();
  }
}

async function send(args: readonly string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseFlags(
    args,
    {
      ...GATEWAY_FLAGS,
      timeout: { type: 'string', short: 't' },
      'no-wait': { type: 'boolean' },
      deliver: { type: 'boolean' },
    },
    'sessions send',
  );
  const [key, ...words] = positionals;
  const message = words.join(' ').trim();
  if (!key || message === '') {
    throw new ColloquyError(
      'INVALID_ARGUMENT',
      `Usage: ${CLI} sessions send <key> <message> [--timeout seconds] [--no-wait] [--deliver]`,
    );
  }
  const timeoutSeconds = positiveInt(values.timeout, 120, '--timeout');
  const { client, runInfo, config } = await connectGateway(connectFlags(values), io);
  try {
    const modelless = runInfo?.model === undefined && !config?.core.agents.list.some((agent) => agent.model);
    if (runInfo && modelless && parseSlashCommand(message) === undefined) {
      // The bot would store the message and end the run in an error; say why first, as the web chat does.
      writeLines(
        io.err,
        `The bot has no model, so nothing can answer yet. ${MODEL_RESTART_HINT}`,
        MODEL_HELP,
      );
      return 1;
    }
    const queued = await client
      .call('agent', {
        sessionKey: key,
        message,
        deliver: values.deliver ?? false,
        provenance: { kind: 'system', sourceTool: 'colloquy-cli' },
        idempotencyKey: `cli-${randomUUID()}`,
      })
      .catch(explainMissing(key));
    if (values['no-wait']) {
      writeLines(
        io.out,
        values.json ? JSON.stringify(queued) : `Queued run ${queued.runId} in ${queued.sessionKey}.`,
      );
      return 0;
    }
    const progress = values.json ? undefined : startProgress(`waiting for ${queued.sessionKey}`, io.err);
    let waited: Awaited<ReturnType<typeof client.call<'agent.wait'>>>;
    try {
      waited = await client.call('agent.wait', { runId: queued.runId, timeoutMs: timeoutSeconds * 1000 });
    } finally {
      progress?.stop();
    }
    if (values.json) {
      writeLines(io.out, JSON.stringify(waited, null, 2));
    } else if (waited.waitTimedOut) {
      writeLines(
        io.err,
        `No reply within ${timeoutSeconds}s; run ${queued.runId} continues. Read it later with: ${CLI} sessions history ${key}`,
      );
    } else if (waited.status === 'done') {
      writeLines(io.out, waited.reply?.trim() || '(no text)');
    } else {
      writeLines(
        io.err,
        `The run ended with status ${waited.status}${waited.error ? `: ${waited.error}` : ''}`,
      );
    }
    return !waited.waitTimedOut && waited.status === 'done' ? 0 : 1;
  } finally {
    await client.close();
  }
}

/** The connection flags of a command's parsed values. */
export function connectFlags(values: {
  url?: string | undefined;
  token?: string | undefined;
  config?: string | undefined;
  'state-dir'?: string | undefined;
}) {
  return {
    ...(values.url ? { url: values.url } : {}),
    ...(values.token ? { token: values.token } : {}),
    ...(values.config ? { config: values.config } : {}),
    ...(values['state-dir'] ? { stateDir: values['state-dir'] } : {}),
  };
}

/** A missing session, told with this CLI's command (the gateway's own message names its `sessions.list` method). */
export function explainMissing(key: string): (error: unknown) => never {
  return (error) => {
    if (isColloquyError(error) && error.code === 'SESSION_NOT_FOUND') {
      throw new ColloquyError(
        'SESSION_NOT_FOUND',
        `No session "${key}". See the session keys with: ${CLI} sessions list`,
        { key },
      );
    }
    throw error;
  };
}

function positiveInt(raw: string | undefined, fallback: number, flag: string): number {
  return wholeNumber(raw, fallback, flag, 1);
}

/**
 * A flag's whole number within bounds, or `fallback` when the flag is absent.
 *
 * @throws ColloquyError `INVALID_ARGUMENT` naming the flag and the range
 */
export function wholeNumber(
  raw: string | undefined,
  fallback: number,
  flag: string,
  min: number,
  max = Number.MAX_SAFE_INTEGER,
): number {
  if (raw === undefined) return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max) {
    const range = max === Number.MAX_SAFE_INTEGER ? `of at least ${min}` : `from ${min} to ${max}`;
    throw new ColloquyError('INVALID_ARGUMENT', `${flag} must be a whole number ${range}, got "${raw}".`);
  }
  return n;
}

/** The `--kind` flags (repeated or comma-separated), checked against the known kinds. */
function kindFlags(raw: readonly string[] | undefined): SessionKind[] {
  const kinds = (raw ?? []).flatMap((k) => k.split(',')).map((k) => k.trim().toLowerCase());
  const unknown = kinds.filter((k) => !(SESSION_KINDS as readonly string[]).includes(k));
  if (unknown.length > 0) {
    throw new ColloquyError(
      'INVALID_ARGUMENT',
      `Unknown kind ${unknown.join(', ')}. Kinds: ${SESSION_KINDS.join(', ')}.`,
    );
  }
  return kinds as SessionKind[];
}

function indent(text: string): string {
  return text
    .split('\n')
    .map((line) => `  ${line}`)
    .join('\n');
}
