import type { TranscriptMessage } from '@colloquy/core';
import { FORK_MAX_BYTES } from '@colloquy/core/internal';
import { afterEach, describe, expect, it } from 'vitest';
import {
  call,
  isSubagent,
  MAIN,
  type SubagentHarness,
  seedMain,
  startSubagentHarness,
} from '../subagents/subagents-fixture.js';
import { STORE_KINDS, waitFor } from '../support/harness.js';

const SECRET = 'zq-fork-secret-4471';
let h: SubagentHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const user = (text: string, i: number): TranscriptMessage => ({ role: 'user', content: text, timestamp: i });
const assistant = (text: string, i: number): TranscriptMessage => ({
  role: 'assistant',
  content: text,
  timestamp: i,
});

interface Spawned {
  status: string;
  childSessionKey: string;
  runId: string;
  inherited?: { messages: number; redacted: boolean; dropped: number };
}

describe.each(STORE_KINDS)('sessions_spawn context "fork" (%s store)', (storeKind) => {
  async function boot() {
    h = await startSubagentHarness({
      storeKind,
      config: { redaction: { secrets: [SECRET] } },
      script: (request) => (isSubagent(request) ? 'child done' : 'ok'),
    });
    await seedMain(h.store);
    return h;
  }

  it('seeds the child with at most 20 recent messages, sanitised and marked inherited, before its task', async () => {
    const { store } = await boot();
    const history: TranscriptMessage[] = [];
    for (let i = 0; i < 30; i++) history.push(i % 2 ? assistant(`reply ${i}`, i) : user(`note ${i}`, i));
    history.push(user(`the password is ${SECRET} and key sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123`, 31));
    history.push({ role: 'toolResult', content: 'tool output', toolCallId: 'x', timestamp: 32 });
    await store.appendMessages(MAIN, history);
    const spawned = await call<Spawned>((await h!.tools(MAIN)).sessions_spawn, {
      task: 'Summarise our chat',
      context: 'fork',
    });
    expect(spawned.status).toBe('accepted');
    expect(spawned.inherited).toEqual({ messages: 20, redacted: true, dropped: 11 });
    await waitFor(async () => (await store.getRun(spawned.runId))?.status === 'done', 3000, 'the child');
    const child = await store.readTail(spawned.childSessionKey, 100);
    const inherited = child.filter((m) => m.details?.inherited === true);
    expect(inherited).toHaveLength(21); // the notice and 20 messages
    expect(inherited[0]!.role).toBe('system');
    expect(inherited[0]!.content).toMatch(/inherited from session agent:main:main/);
    expect(inherited.at(-1)!.content).toContain('the password is');
    expect(child.findIndex((m) => m.content === 'Summarise our chat')).toBe(21);
    expect(JSON.stringify(child)).not.toContain(SECRET);
    expect(JSON.stringify(child)).not.toContain('sk-ant-api03');
    expect(JSON.stringify(child)).not.toContain('tool output');
    for (const m of inherited) expect(m.provenance?.sourceSessionKey).toBe(MAIN);
    // The model saw them, and never the secret.
    const request = h!.model.requests.find(isSubagent)!;
    expect(JSON.stringify(request.messages)).toContain('reply 29');
    expect(JSON.stringify(request.messages)).not.toContain(SECRET);
  });

  it('caps the inherited history at 40 KiB, keeping the newest', async () => {
    const { store } = await boot();
    await store.appendMessages(
      MAIN,
      Array.from({ length: 15 }, (_, i) => user(`${i}:${'y'.repeat(3900)}`, i)),
    );
    const spawned = await call<Spawned>((await h!.tools(MAIN)).sessions_spawn, {
      task: 'Go',
      context: 'fork',
    });
    expect(spawned.inherited!.messages).toBeLessThan(15);
    expect(spawned.inherited!.dropped).toBe(15 - spawned.inherited!.messages);
    const child = await store.readTail(spawned.childSessionKey, 100);
    const inherited = child.filter((m) => m.details?.inherited === true && m.role !== 'system');
    expect(
      Buffer.byteLength(JSON.stringify(inherited.map((m) => ({ role: m.role, content: m.content })))),
    ).toBeLessThanOrEqual(FORK_MAX_BYTES);
    expect(String(inherited.at(-1)!.content).startsWith('14:')).toBe(true);
  });

  it('changes nothing for isolated spawns or visibility, and refuses a bad context', async () => {
    const { store } = await boot();
    await store.appendMessages(MAIN, [user('private note', 1)]);
    const tools = await h!.tools(MAIN);
    const isolated = await call<Spawned>(tools.sessions_spawn, { task: 'Alone' });
    const forked = await call<Spawned>(tools.sessions_spawn, { task: 'Together', context: 'fork' });
    expect(isolated.inherited).toBeUndefined();
    const alone = await store.readTail(isolated.childSessionKey, 100);
    expect(alone.some((m) => m.details?.inherited)).toBe(false);
    const [a, b] = await Promise.all([
      store.getSession(isolated.childSessionKey),
      store.getSession(forked.childSessionKey),
    ]);
    expect([b!.spawnedBy, b!.spawnDepth, b!.sandboxed]).toEqual([a!.spawnedBy, a!.spawnDepth, a!.sandboxed]);
    const listed = await call<{ sessions: { key: string }[] }>(tools.sessions_list, { kinds: ['subagent'] });
    expect(listed.sessions.map((s) => s.key).sort()).toEqual(
      [isolated.childSessionKey, forked.childSessionKey].sort(),
    );
    const bad = await call<{ status: string; error: string }>(tools.sessions_spawn, {
      task: 'x',
      context: 'copy',
    });
    expect(bad.status).toBe('error');
    expect(bad.error).toMatch(/context/);
  });
});

describe('agent with session.inheritedHistory', () => {
  it('refuses a seed over the caps or without spawnedBy, naming the field', async () => {
    h = await startSubagentHarness({ script: () => 'ok' });
    await seedMain(h.store);
    const agent = (inheritedHistory: unknown, spawnedBy: string | null = MAIN) =>
      h!.runtime.gateway.call('agent', {
        sessionKey: 'agent:main:subagent:seeded',
        message: 'task',
        ...(spawnedBy ? { spawnedBy } : {}),
        session: { inheritedHistory: inheritedHistory as never },
      });
    await expect(agent(Array.from({ length: 21 }, () => ({ role: 'user', content: 'x' })))).rejects.toThrow(
      /inheritedHistory holds 21 messages; at most 20/,
    );
    await expect(agent([{ role: 'system', content: 'x' }])).rejects.toThrow(/role must be/);
    await expect(agent([{ role: 'user', content: 'x' }], null)).rejects.toThrow(/needs spawnedBy/);
    const ok = await agent([{ role: 'user', content: `raw ${SECRET}` }]);
    expect(ok.status).toBe('queued');
  });
});
