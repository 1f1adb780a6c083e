import type { SessionKind } from '@colloquy/core/gateway';
import { MODEL_HELP } from '../../config/model-help.js';
import { duration } from '../../format/units.js';
import { describeOutage } from '../../state/database-outage.js';
import { describeDiskFull } from '../../state/disk-full.js';
import { describeOutbox } from '../../state/outbox-backlog.js';
import { describeProvider } from '../../state/provider-health.js';
import { type CliIo, writeLines } from '../cli-io.js';
import { connectGateway } from '../connect.js';
import { GATEWAY_FLAGS, parseFlags } from '../parse-flags.js';
import { connectFlags } from './sessions-command.js';

/** How many sessions `status` counts at most. */
const COUNT_LIMIT = 1000;

/**
 * `colloquy status`: whether the bot answers, where it serves, a database it cannot reach or a disk too
 * full to write, its model and model providers (whether each answers, its calls), channels, the replies waiting in the delivery outbox,
 * agents and sessions (counted by kind, with the running ones).
 *
 * @param args - arguments after `status`
 * @param io - streams and environment
 * @returns 0 when the bot answered
 */
export async function statusCommand(args: readonly string[], io: CliIo): Promise<number> {
  const { values } = parseFlags(args, GATEWAY_FLAGS, 'status');
  const { client, url, runInfo, config } = await connectGateway(connectFlags(values), io);
  const outage = runInfo?.database;
  const disk = runInfo?.disk;
  try {
    const asked = Promise.all([
      client.call('agents.list', {}),
      client.call('sessions.list', { limit: COUNT_LIMIT }),
    ]);
    let answers: Awaited<typeof asked>;
    try {
      answers = await asked;
    } catch (error) {
      // The bot runs, but what it would count lives in the database it cannot reach.
      if (!outage) throw error;
      writeLines(
        io.err,
        `Colloquy is running at ${url} (pid ${runInfo.pid}), but ${describeOutage(outage, Date.now())}`,
      );
      return 1;
    }
    const [{ agents }, listed] = answers;
    const byKind = new Map<SessionKind, number>();
    for (const s of listed.sessions) byKind.set(s.kind, (byKind.get(s.kind) ?? 0) + 1);
    const running = listed.sessions.filter((s) => s.status === 'running').map((s) => s.key);
    const model = runInfo?.model ?? config?.core.agents.defaults.model;
    if (values.json) {
      writeLines(
        io.out,
        JSON.stringify(
          {
            gateway: url,
            pid: runInfo?.pid,
            startedAt: runInfo?.startedAt,
            webchat: runInfo?.webchatUrl,
            model: model ?? null,
            channels: runInfo?.channels ?? {},
            ...(outage ? { database: outage } : {}),
            ...(disk ? { disk } : {}),
            outbox: runInfo?.outbox ?? { pending: 0, failingTargets: 0, byChannel: {} },
            ...(runInfo?.providers ? { providers: runInfo.providers } : {}),
            agents,
            sessions: { total: listed.total, byKind: Object.fromEntries(byKind), running },
          },
          null,
          2,
        ),
      );
      return 0;
    }
    const backlog = runInfo?.outbox && describeOutbox(runInfo.outbox, Date.now());
    const uptime = runInfo ? ` (pid ${runInfo.pid}, up ${duration(Date.now() - runInfo.startedAt)})` : '';
    const channels = runInfo
      ? Object.entries(runInfo.channels)
          .map(([id, c]) => `${id} ${c.state}`)
          .join(', ')
      : 'unknown (no run.json in the state directory)';
    const kinds = [...byKind.entries()].map(([kind, n]) => `${n} ${kind}`).join(', ');
    // One line per provider called so far; the figures are as old as run.json.
    const ageMs = runInfo ? Date.now() - runInfo.updatedAt : 0;
    const providers = Object.entries(runInfo?.providers ?? {}).map(
      ([id, health]) => `  Provider: ${describeProvider(id, health, ageMs)}`,
    );
    writeLines(
      io.out,
      `Colloquy is running at ${url}${uptime}.`,
      ...(runInfo?.webchatUrl ? [`  Web chat: ${runInfo.webchatUrl}`] : []),
      ...(outage ? [`  Database: ${describeOutage(outage, Date.now())}`] : []),
      ...(disk ? [`  Disk:     ${describeDiskFull(disk, Date.now())}`] : []),
      ...(backlog ? [`  Outbox:   ${backlog}`] : []),
      `  Model:    ${model ?? 'none configured'}`,
      ...providers,
      `  Channels: ${channels}`,
      `  Agents:   ${agents.map((a) => `${a.id}${a.default ? ' (default)' : ''}${a.model ? ` ${a.model}` : ''}`).join(', ')}`,
      `  Sessions: ${listed.total}${kinds ? ` (${kinds})` : ''}${running.length > 0 ? `; running: ${running.join(', ')}` : ''}`,
      ...(model ? [] : ['To chat, restart the bot with a model:', MODEL_HELP]),
    );
    return 0;
  } finally {
    await client.close();
  }
}
