// Issue 37's "Done when", run against the running app: a spawn tree of depth 2 with 5 sub-agents,
// one failing and one killed mid-run, started from the web chat, is one trace in an OTLP receiver,
// the same tree in `colloquy tree` and on the owner panel's timeline, and one progress message in
// the chat that ends finalised.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { SessionsTreeResult } from '@colloquy/core/gateway';
import { createGatewayClient, type GatewayClient } from '@colloquy/runtime';
import { type OpenAIFake, startOpenAIFake } from '@colloquy/testkit/openai-fake';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AppProcess, runCliProcess, startApp } from './support/app-process.js';
import { CHROMIUM, HAS_CHROMIUM, launchBrowser, type TestBrowser } from './support/browser.js';
import {
  attribute,
  type OtlpReceiver,
  type ReceivedSpan,
  startOtlpReceiver,
} from './support/otlp-receiver.js';
import {
  BUILD_THE_TREE,
  nodeLabelled,
  runSpawnTreeToEnd,
  SPAWN_TREE_CONFIG,
  spawnTreeScript,
} from './support/spawn-tree.js';
import { waitFor } from './support/wait-for.js';
import { openProbe, type WsProbe } from './support/ws-probe.js';

/** The words of the progress line (runtime `progress-text`): working, then finished. */
const PROGRESS = /^\d+ helpers? (working|finished)/;
const SPAN_ERROR = 2;

interface ChatFrame {
  type: string;
  message?: { id: string; role: string; text: string };
}

/** The frames of progress lines: sent (`message`) and edited (`edit`). */
function progress(frames: readonly Record<string, unknown>[]): ChatFrame[] {
  return (frames as unknown as ChatFrame[]).filter(
    (frame) => frame.message?.role === 'assistant' && PROGRESS.test(frame.message.text),
  );
}

if (!HAS_CHROMIUM)
  console.warn(
    `spawn tree test skipped: ${CHROMIUM} is absent (apt-get install chromium, or set COLLOQUY_CHROMIUM)`,
  );

describe.skipIf(!HAS_CHROMIUM)(
  'a spawn tree of depth 2 with 5 sub-agents, one failing and one killed',
  () => {
    let receiver: OtlpReceiver;
    let fake: OpenAIFake;
    let app: AppProcess;
    let client: GatewayClient;
    let chat: WsProbe;
    let browser: TestBrowser;

    beforeAll(async () => {
      receiver = await startOtlpReceiver();
      fake = await startOpenAIFake(spawnTreeScript);
      app = await startApp(SPAWN_TREE_CONFIG, {
        COLLOQUY_MODEL: 'fake/test-model',
        OPENAI_BASE_URL: fake.baseURL,
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
      });
      client = createGatewayClient({ url: app.gatewayUrl, token: app.token, reconnect: false });
      await client.ready();
      browser = await launchBrowser();
    }, 60_000);

    afterAll(async () => {
      chat?.close();
      await browser?.close();
      await client?.close();
      await app?.cleanup();
      await fake?.close();
      await receiver?.close();
    });

    it('is one trace in the OTLP receiver, the same tree in colloquy tree and on the owner timeline, and one progress message finalised in the chat', {
      timeout: 90_000,
    }, async () => {
      const origin = app.webchatUrl.replace(/\/$/, '');
      chat = await openProbe(`${origin.replace('http', 'ws')}/ws`, { origin });
      await chat.next((frame) => frame.type === 'ready');
      chat.send(JSON.stringify({ type: 'message', text: BUILD_THE_TREE, clientId: 'c1' }));
      const root = await waitFor(
        async () => {
          const { sessions } = await client.call('sessions.list', {});
          return sessions.find((s) => s.deliveryContext?.channel === 'webchat')?.key;
        },
        (key) => key !== undefined,
        "the visitor's session",
      );
      // The crawler works until the chat shows the progress line and one edit of it (the line is
      // shown after 2 s of work and edited at most every 5 s), then it is killed mid-run.
      const tree = await runSpawnTreeToEnd(client, root!, () =>
        waitFor(
          async () => progress(chat.frames).map((frame) => frame.type),
          (types) => types.includes('message') && types.includes('edit'),
          'the progress line shown, then edited while the crawler works',
          20_000,
        ),
      );
      expect(tree.nodes.map((node) => [node.label, node.depth, node.status])).toEqual([
        [undefined, 0, tree.nodes[0]!.status],
        ['coordinator', 1, 'done'],
        ['trains', 1, 'done'],
        ['flaky', 1, 'error'],
        ['hotels', 2, 'done'],
        ['crawler', 2, 'killed'],
      ]);

      // colloquy tree: the same sessions, each under its spawner, with the same statuses.
      const printed = await runCliProcess(['tree', root!, '--state-dir', 'state'], { cwd: app.dir });
      expect(printed.stderr).toBe('');
      const lines = printed.stdout.trimEnd().split('\n');
      expect(lines[0]).toMatch(new RegExp(`^${escapeRegExp(root!)} {2}${tree.nodes[0]!.status} `));
      const rows = lines.filter((line) => /^[│├└ ]*[├└]─ /.test(line));
      expect(rows.map((line) => /[├└]─ (\w+) \(\S+\) {2}(\w+) /.exec(line)?.slice(1))).toEqual([
        ['coordinator', 'done'],
        ['hotels', 'done'],
        ['crawler', 'killed'],
        ['trains', 'done'],
        ['flaky', 'error'],
      ]);

      await checkTimeline(tree);

      // The chat: one progress message, edited in place, its last edit the finished line.
      await waitFor(
        async () => progress(chat.frames).at(-1)?.message?.text,
        (text) => text?.includes('finished') === true,
        'the progress message finalised',
        20_000,
      );
      expect(await app.stop()).toBe(0);
      const progressFrames = progress(chat.frames);
      const shown = progressFrames.filter((frame) => frame.type === 'message');
      expect(shown, 'one progress message').toHaveLength(1);
      const edits = progressFrames.filter((frame) => frame.type === 'edit');
      // At least one edit while the crawler worked, then the finished line.
      expect(edits.length).toBeGreaterThanOrEqual(2);
      for (const edit of edits.slice(0, -1)) expect(edit.message!.text).toMatch(/^\d+ helpers? working: /);
      for (const edit of edits) expect(edit.message!.id).toBe(shown[0]!.message!.id);
      expect(edits.at(-1)!.message!.text).toMatch(/^3 helpers finished in .* \(1 failed\)$/);

      // The OTLP receiver: every span of the tree in one trace, an invoke_agent span per session.
      const spans = receiver.spans();
      const keys = new Set(tree.nodes.map((node) => node.sessionKey));
      const turns = spans.filter(
        (span) =>
          span.name.startsWith('invoke_agent ') &&
          keys.has(String(attribute(span.attributes, 'gen_ai.conversation.id'))),
      );
      // The trace starts at the visitor's message, whose turn is the root's first.
      const inbound = spans.filter((span) => span.name === 'colloquy.inbound webchat');
      expect(inbound).toHaveLength(1);
      const traceId = inbound[0]!.traceId;
      const firstTurn = turns.find((span) => span.parentSpanId === inbound[0]!.spanId);
      expect(attribute(firstTurn!.attributes, 'gen_ai.conversation.id')).toBe(root);
      const inTree = treeSpans(spans, keys);
      expect(new Set(inTree.map((span) => span.traceId))).toEqual(new Set([traceId]));
      expect(inTree.length).toBeGreaterThan(30);
      const turnsOf = (label: string) =>
        turns.filter(
          (span) =>
            attribute(span.attributes, 'gen_ai.conversation.id') === nodeLabelled(tree, label)!.sessionKey,
        );
      expect(new Set(turns.map((span) => attribute(span.attributes, 'gen_ai.conversation.id')))).toEqual(
        keys,
      );
      expect(turnsOf('flaky').map((span) => span.status?.code)).toEqual([SPAN_ERROR]);
      expect(attribute(turnsOf('flaky')[0]!.attributes, 'error.type')).toBe('error');
      expect(turnsOf('crawler').map((span) => attribute(span.attributes, 'error.type'))).toEqual(['killed']);
      for (const label of ['coordinator', 'trains', 'hotels']) {
        expect(
          turnsOf(label).every((span) => span.status?.code !== SPAN_ERROR),
          label,
        ).toBe(true);
      }
    });

    /** Opens the owner panel's timeline of the tree in Chromium and checks its rows and statuses. */
    async function checkTimeline(tree: SessionsTreeResult): Promise<void> {
      const page = await browser.context.newPage();
      const problems: string[] = [];
      page.on('pageerror', (error) => problems.push(error.message));
      await page.goto(`${app.webchatUrl}?admin=${app.token}`);
      await page.locator('#panel:not([hidden])').waitFor({ timeout: 15_000 });
      const root = tree.nodes[0]!.sessionKey;
      await page.locator(`.node[data-key="${root}"] .timeline-button`).first().click({ timeout: 15_000 });
      await page.locator('#timeline:not([hidden])').waitFor({ timeout: 15_000 });
      for (const node of tree.nodes) {
        await page
          .locator(`.tl-row[data-key="${node.sessionKey}"][data-status="${node.status}"]`)
          .waitFor({ timeout: 15_000 });
      }
      expect(
        await page.locator('.tl-row').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-key'))),
      ).toEqual([
        root,
        ...['coordinator', 'hotels', 'crawler', 'trains', 'flaky'].map(
          (label) => nodeLabelled(tree, label)!.sessionKey,
        ),
      ]);
      expect(await page.locator('.tl-row[data-failed="true"]').count()).toBe(2);
      expect(await page.locator('#timeline-meta').textContent()).toMatch(/^6 sessions · 2 failed$/);
      const dir = process.env.COLLOQUY_SCREENSHOT_DIR;
      if (dir) {
        mkdirSync(dir, { recursive: true });
        await page.screenshot({ path: join(dir, 'spawn-tree-timeline.png') });
      }
      expect(problems).toEqual([]);
      await page.close();
    }
  },
);

/** Spans of the tree: those of its sessions or carrying a tree id, and every span below them. */
function treeSpans(spans: readonly ReceivedSpan[], keys: ReadonlySet<string>): ReceivedSpan[] {
  const picked = new Set(
    spans.filter(
      (span) =>
        keys.has(String(attribute(span.attributes, 'gen_ai.conversation.id'))) ||
        attribute(span.attributes, 'colloquy.tree.id') !== undefined,
    ),
  );
  const ids = new Set([...picked].map((span) => span.spanId));
  for (let grew = true; grew; ) {
    grew = false;
    for (const span of spans) {
      if (picked.has(span) || span.parentSpanId === undefined || !ids.has(span.parentSpanId)) continue;
      picked.add(span);
      ids.add(span.spanId);
      grew = true;
    }
  }
  return [...picked];
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
