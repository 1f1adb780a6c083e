// Benchmarks sub-agent fan-out on @colloquy/runtime: 200 parent sessions each spawn 5 sub-agents
// (1,000 in all) through the sessions_spawn tool, with a zero-latency scripted model, the SQLite
// store and the subagent lane at 8. The clock runs from the first parent message until every
// completion was delivered exactly once: in its parent's inbox (read by the parent's next turn)
// and in the parent's chat. Target: <= 5 s; duplicates and lost must both be 0.
//
// Run with `pnpm bench` at the root (turbo builds dist/ first) or `node bench/subagents.mjs` after
// `pnpm build`. `--strict` exits 1 when the target is missed or anything is duplicated or lost.
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createSessionTools, resolveConfig } from '@colloquy/core';
import { openSqliteStore } from '@colloquy/store-sqlite';
import { createScriptedModel } from '@colloquy/testkit';
import { createRuntime } from '../dist/index.js';

const STRICT = process.argv.includes('--strict');
const PARENTS = 200;
const CHILDREN_PER_PARENT = 5;
const TOTAL = PARENTS * CHILDREN_PER_PARENT;
const TARGET_MS = 5000;
const TIMEOUT_MS = 60_000;

/** A channel plugin that counts what it is asked to send, per announce (child session key). */
function createBenchChannel() {
  const sent = [];
  let counter = 0;
  let onSend = () => {};
  return {
    id: 'bench',
    capabilities: {
      threads: false,
      edits: false,
      reactions: false,
      media: false,
      typing: false,
      maxTextLength: 100_000,
      markdown: 'plain',
    },
    sent,
    set onSend(fn) {
      onSend = fn;
    },
    async start() {},
    async stop() {},
    async send(_to, message) {
      const messageId = `bench-${++counter}`;
      sent.push(message.text);
      onSend();
      return { messageId, messageIds: [messageId] };
    },
  };
}

const isChild = (request) => request.system.includes('You are a sub-agent');

async function main() {
  const dir = mkdtempSync(join(tmpdir(), 'colloquy-subagents-bench-'));
  const store = openSqliteStore({ file: join(dir, 'colloquy.db') });
  const config = resolveConfig({
    agents: { defaults: { model: 'scripted/bench' } },
    runtime: { lanes: { main: 4, subagent: 8 } },
  });
  const model = createScriptedModel(
    (request) => {
      if (isChild(request)) return 'child result';
      const last = request.messages.at(-1);
      if (last?.role === 'user' && typeof last.content === 'string' && last.content.startsWith('fan out')) {
        return {
          toolCalls: Array.from({ length: CHILDREN_PER_PARENT }, (_, i) => ({
            name: 'sessions_spawn',
            arguments: { task: `part ${i}`, label: `part-${i}` },
          })),
        };
      }
      return last?.role === 'toolResult' ? 'spawned' : 'noted';
    },
    { keepRequests: 0 },
  );
  const channel = createBenchChannel();
  const runtime = createRuntime({
    config,
    store,
    plugins: [channel],
    workspaceDir: join(dir, 'workspaces'),
    models: (ref) => (ref.startsWith('scripted/') ? { provider: model, modelId: 'bench' } : undefined),
    tools: ({ session, gateway }) =>
      session.kind === 'subagent'
        ? []
        : createSessionTools({ requesterKey: session.key, agentId: session.agentId, config, gateway }),
  });
  await runtime.start();
  const parents = Array.from({ length: PARENTS }, (_, i) => `agent:main:bench:group:p${i}`);
  const now = Date.now();
  for (const [i, key] of parents.entries()) {
    await store.putSession({
      key,
      sessionId: `parent-${i}`,
      agentId: 'main',
      kind: 'group',
      createdAt: now,
      updatedAt: now,
      status: 'idle',
      spawnDepth: 0,
      chatType: 'group',
      channel: 'bench',
      deliveryContext: { channel: 'bench', to: `chat-${i}`, accountId: 'default' },
    });
  }

  const announcesSent = () => channel.sent.filter((text) => text.startsWith('Sub-agent')).length;
  const cpuStart = process.cpuUsage();
  const started = performance.now();
  let allSent;
  const sentAll = new Promise((resolve) => {
    allSent = resolve;
  });
  channel.onSend = () => {
    if (announcesSent() >= TOTAL) allSent();
  };
  for (const key of parents) {
    await runtime.gateway.call('agent', { sessionKey: key, message: 'fan out', deliver: false });
  }
  const timeout = new Promise((resolve) => setTimeout(() => resolve('timeout'), TIMEOUT_MS).unref());
  const result = await Promise.race([sentAll, timeout]);
  // Every parent must also have read its announces (inbox consumed by a turn).
  while (result !== 'timeout' && (await pendingInboxes(store, parents))) {
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  const elapsed = performance.now() - started;
  const cpu = process.cpuUsage(cpuStart);
  const cpuMs = (cpu.user + cpu.system) / 1000;

  // Exactly once: per child run, one outbox row delivered, one announce in the parent's transcript,
  // one chat message.
  const rows = await store.listOutbox({ statuses: ['pending', 'delivered', 'skipped', 'parked'] });
  const delivered = rows.filter((row) => row.status === 'delivered');
  const inTranscripts = new Map();
  for (const key of parents) {
    for (const message of await store.readTail(key, 1000)) {
      if (message.provenance?.kind !== 'announce') continue;
      const id = message.provenance.sourceRunId;
      inTranscripts.set(id, (inTranscripts.get(id) ?? 0) + 1);
    }
  }
  const chatCounts = new Map();
  for (const text of channel.sent) {
    const key = /^Sub-agent "[^"]*" \(([^)]+)\)/.exec(text)?.[1];
    if (key) chatCounts.set(key, (chatCounts.get(key) ?? 0) + 1);
  }
  const duplicates =
    [...inTranscripts.values()].reduce((sum, n) => sum + Math.max(0, n - 1), 0) +
    [...chatCounts.values()].reduce((sum, n) => sum + Math.max(0, n - 1), 0);
  const children = (await store.listSessions({ kinds: ['subagent'] })).length;
  const lost = Math.max(0, TOTAL - inTranscripts.size) + Math.max(0, TOTAL - chatCounts.size);

  await runtime.shutdown({ drainMs: 1000 });
  rmSync(dir, { recursive: true, force: true });

  const ok = result !== 'timeout' && elapsed <= TARGET_MS && duplicates === 0 && lost === 0;
  console.log(
    `Sub-agent fan-out: ${PARENTS} parents x ${CHILDREN_PER_PARENT} sub-agents (SQLite, subagent lane 8, ${cpus().length} CPUs)`,
  );
  console.log(`  sub-agent sessions     ${children}`);
  console.log(`  outbox rows delivered  ${delivered.length} of ${rows.length}`);
  console.log(`  announces read         ${inTranscripts.size} (in parent transcripts)`);
  console.log(`  chat announces         ${chatCounts.size}`);
  console.log(`  model turns            ${model.callCount}`);
  console.log(`  duplicates             ${duplicates}   (must be 0)`);
  console.log(`  lost                   ${lost}   (must be 0)`);
  console.log(
    `  time to all delivered  ${(elapsed / 1000).toFixed(2)} s   (target <= ${TARGET_MS / 1000} s) ${ok ? 'OK' : 'MISSED'}`,
  );
  console.log(
    `  CPU time of this process ${(cpuMs / 1000).toFixed(2)} s (wall time includes waiting for a CPU on a busy machine)`,
  );
  if (STRICT && !ok) process.exitCode = 1;
}

await main();

/** True while any parent still has unread inbox entries. */
async function pendingInboxes(store, parents) {
  for (const key of parents) if ((await store.listInbox(key)).length > 0) return true;
  return false;
}
