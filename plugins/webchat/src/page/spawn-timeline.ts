import type { SessionsTreeResult, SpawnTreeNode, SpawnTreeRun } from '@colloquy/core/gateway';
import { byId, compactNumber, duration, el } from './dom.js';

/** The height of one row in CSS pixels (the stylesheet's `.tl-row` has the same). */
const ROW_HEIGHT = 34;
/** Rows rendered above and below the visible ones, so a scroll shows no blank rows. */
const OVERSCAN = 8;
/** Run states that end a run without its answer. */
const FAILED = new Set(['error', 'timeout', 'killed', 'interrupted']);

/** A session of the tree in display order, with where its parent's row is. */
interface Row {
  node: SpawnTreeNode;
  index: number;
  parentIndex: number | undefined;
}

/**
 * The owner's spawn timeline: the tree below one session as rows (each session under the one that
 * spawned it), each run a bar on one shared time axis with its tool calls inside, and each announce
 * an arrow back up to the parent's row; failures are marked. Only the rows in view are in the DOM,
 * and a row is rebuilt only when what it shows changed, so a tree of 1,000 sessions scrolls and
 * updates smoothly. Keyboard: arrows move, Home/End jump, Enter opens the session's transcript.
 * Every render is measured as `colloquy:timeline-render` (Performance API).
 */
export class SpawnTimeline {
  private readonly section = byId('timeline');
  private readonly title = byId('timeline-title');
  private readonly meta = byId('timeline-meta');
  private readonly axis = byId('timeline-axis');
  private readonly viewport = byId('timeline-rows');
  private readonly canvas = el('div', 'tl-canvas');
  private readonly rendered = new Map<string, { row: HTMLElement; signature: string }>();
  private rows: Row[] = [];
  private tree: SessionsTreeResult | undefined;
  private openKey: string | undefined;
  private clockSkew = 0;
  private focusIndex = 0;
  private ticker: number | undefined;
  private frame: number | undefined;

  constructor(
    private readonly sessionList: HTMLElement,
    /** Called with a session key when the owner opens a row. */
    private readonly onOpen: (key: string) => void,
    /** Called when the timeline is closed (to stop the server's pushes). */
    private readonly onClose: () => void,
  ) {
    this.viewport.append(this.canvas);
    this.viewport.setAttribute('role', 'tree');
    this.viewport.addEventListener('scroll', () => this.schedule());
    this.viewport.addEventListener('keydown', (event) => this.onKey(event));
    this.viewport.addEventListener('click', (event) => {
      const row = (event.target as HTMLElement).closest<HTMLElement>('.tl-row');
      if (row?.dataset.key) this.onOpen(row.dataset.key);
    });
    byId('timeline-close').addEventListener('click', () => this.close());
  }

  /** The key of the root whose tree is open, if any. */
  get open(): string | undefined {
    return this.openKey;
  }

  /** Shows the timeline of `key` while its tree loads. */
  loading(key: string): void {
    this.openKey = key;
    this.tree = undefined;
    this.rows = [];
    this.focusIndex = 0;
    this.title.textContent = key;
    this.title.title = key;
    this.meta.textContent = 'Loading…';
    this.viewport.setAttribute('aria-label', `Spawn tree of ${key}`);
    this.clear();
    this.sessionList.hidden = true;
    this.section.hidden = false;
  }

  /** Shows a `tree` frame (ignored when another tree was opened since, or the timeline is closed). */
  show(tree: SessionsTreeResult): void {
    if (tree.rootKey !== this.openKey) return;
    this.tree = tree;
    this.clockSkew = Date.now() - tree.now;
    this.rows = orderRows(tree.nodes);
    this.focusIndex = Math.min(this.focusIndex, Math.max(0, this.rows.length - 1));
    const running = tree.nodes.filter((node) => node.status === 'running').length;
    const failed = tree.nodes.filter(isFailed).length;
    this.meta.textContent = [
      `${tree.nodes.length}${tree.truncated ? '+' : ''} sessions`,
      running ? `${running} running` : '',
      failed ? `${failed} failed` : '',
    ]
      .filter(Boolean)
      .join(' · ');
    this.canvas.style.height = `${this.rows.length * ROW_HEIGHT}px`;
    window.clearInterval(this.ticker);
    this.ticker = running > 0 ? window.setInterval(() => this.render(), 1000) : undefined;
    this.render();
  }

  /** Back to the session list. */
  close(): void {
    if (this.openKey === undefined) return;
    this.openKey = undefined;
    this.tree = undefined;
    window.clearInterval(this.ticker);
    this.clear();
    this.section.hidden = true;
    this.sessionList.hidden = false;
    this.onClose();
  }

  private clear(): void {
    this.rendered.clear();
    this.canvas.replaceChildren();
    this.axis.replaceChildren();
  }

  private schedule(): void {
    if (this.frame !== undefined) return;
    this.frame = window.requestAnimationFrame(() => {
      this.frame = undefined;
      this.render();
    });
  }

  /** The time axis: from the first run's queueing to the last end (or now, while runs run). */
  private window(): { from: number; to: number } {
    const now = Date.now() - this.clockSkew;
    let from = Number.POSITIVE_INFINITY;
    let to = Number.NEGATIVE_INFINITY;
    for (const { node } of this.rows) {
      for (const run of node.runs) {
        from = Math.min(from, run.startedAt ?? run.createdAt);
        to = Math.max(to, run.endedAt ?? now, run.announce?.at ?? 0);
      }
    }
    if (!Number.isFinite(from)) return { from: now - 1000, to: now };
    return { from, to: Math.max(to, from + 1000) };
  }

  private render(): void {
    if (!this.tree || this.section.hidden) return;
    performance.mark('colloquy:timeline-render-start');
    const span = this.window();
    const scale = `${span.from}:${span.to}`;
    this.axis.replaceChildren(
      el('span', 'tl-axis-start', new Date(span.from).toLocaleTimeString()),
      el('span', 'tl-axis-span', duration(span.to - span.from)),
    );
    const first = Math.max(0, Math.floor(this.viewport.scrollTop / ROW_HEIGHT) - OVERSCAN);
    const visible = Math.ceil((this.viewport.clientHeight || ROW_HEIGHT * 20) / ROW_HEIGHT);
    const last = Math.min(this.rows.length, first + visible + OVERSCAN * 2);
    const keep = new Set<string>();
    for (let index = first; index < last; index++) {
      const row = this.rows[index]!;
      const key = row.node.sessionKey;
      keep.add(key);
      const signature = `${index}|${scale}|${index === this.focusIndex}|${JSON.stringify(row.node)}`;
      const current = this.rendered.get(key);
      if (current?.signature === signature) continue;
      const element = this.renderRow(row, span, index === this.focusIndex);
      if (current) current.row.replaceWith(element);
      else this.canvas.append(element);
      this.rendered.set(key, { row: element, signature });
    }
    for (const [key, { row }] of this.rendered) {
      if (keep.has(key)) continue;
      row.remove();
      this.rendered.delete(key);
    }
    performance.measure('colloquy:timeline-render', 'colloquy:timeline-render-start');
  }

  private renderRow(row: Row, span: { from: number; to: number }, focused: boolean): HTMLElement {
    const { node } = row;
    const div = el('div', 'tl-row');
    div.style.top = `${row.index * ROW_HEIGHT}px`;
    div.dataset.key = node.sessionKey;
    div.dataset.status = node.status;
    if (isFailed(node)) div.dataset.failed = 'true';
    div.setAttribute('role', 'treeitem');
    div.setAttribute('aria-level', String(node.depth + 1));
    const now = Date.now() - this.clockSkew;
    div.setAttribute('aria-label', describeNode(node, now));
    div.tabIndex = focused ? 0 : -1;

    const label = el('div', 'tl-label');
    label.style.paddingLeft = `${6 + node.depth * 14}px`;
    label.append(el('span', `pill pill-${node.status}`, node.status), el('span', 'tl-name', nameOf(node)));
    if (isFailed(node)) label.append(el('span', 'tl-failed', '✗'));
    label.title = node.sessionKey;

    const track = el('div', 'tl-track');
    track.setAttribute('aria-hidden', 'true');
    const width = span.to - span.from;
    const at = (time: number) => `${(((time - span.from) / width) * 100).toFixed(3)}%`;
    for (const run of node.runs) {
      const start = run.startedAt ?? run.createdAt;
      const end = run.endedAt ?? now;
      const bar = el('div', 'tl-bar');
      bar.dataset.status = run.status;
      bar.dataset.runId = run.runId;
      bar.style.left = at(start);
      bar.style.width = `${Math.max(0.4, ((end - start) / width) * 100).toFixed(3)}%`;
      bar.title = describeRun(run, now);
      const runSpan = Math.max(1, end - start);
      for (const call of run.toolCalls) {
        const tool = el('span', 'tl-tool');
        tool.dataset.outcome = call.outcome;
        tool.style.left = `${(((call.startedAt - start) / runSpan) * 100).toFixed(3)}%`;
        tool.style.width = `${Math.max(1, (((call.endedAt ?? end) - call.startedAt) / runSpan) * 100).toFixed(3)}%`;
        tool.title = `${call.name}: ${call.outcome}`;
        bar.append(tool);
      }
      bar.append(el('span', 'tl-bar-text', barText(run, now)));
      track.append(bar);
      if (run.announce && row.parentIndex !== undefined) {
        const arrow = el('span', 'tl-announce');
        arrow.dataset.state = run.announce.state;
        arrow.style.left = at(Math.max(run.announce.at, end));
        arrow.style.height = `${(row.index - row.parentIndex) * ROW_HEIGHT - ROW_HEIGHT / 2}px`;
        arrow.title = `announce to the parent: ${run.announce.state}`;
        track.append(arrow);
      }
    }
    div.append(label, track);
    return div;
  }

  private onKey(event: KeyboardEvent): void {
    if (this.rows.length === 0) return;
    const moves: Record<string, number> = {
      ArrowDown: this.focusIndex + 1,
      ArrowUp: this.focusIndex - 1,
      PageDown: this.focusIndex + 10,
      PageUp: this.focusIndex - 10,
      Home: 0,
      End: this.rows.length - 1,
    };
    const parent = this.rows[this.focusIndex]?.parentIndex;
    if (parent !== undefined) moves.ArrowLeft = parent;
    if (event.key === 'Enter' || event.key === ' ') {
      event.preventDefault();
      this.onOpen(this.rows[this.focusIndex]!.node.sessionKey);
      return;
    }
    const target = moves[event.key];
    if (target === undefined) return;
    event.preventDefault();
    this.focusRow(Math.max(0, Math.min(this.rows.length - 1, target)));
  }

  private focusRow(index: number): void {
    this.focusIndex = index;
    const top = index * ROW_HEIGHT;
    if (top < this.viewport.scrollTop) this.viewport.scrollTop = top;
    else if (top + ROW_HEIGHT > this.viewport.scrollTop + this.viewport.clientHeight) {
      this.viewport.scrollTop = top + ROW_HEIGHT - this.viewport.clientHeight;
    }
    this.render();
    this.rendered.get(this.rows[index]!.node.sessionKey)?.row.focus();
  }
}

/** Depth-first: each session right under the one that spawned it, in the order the tree gives. */
function orderRows(nodes: readonly SpawnTreeNode[]): Row[] {
  const children = new Map<string | undefined, SpawnTreeNode[]>();
  for (const node of nodes) {
    const siblings = children.get(node.parentKey) ?? [];
    siblings.push(node);
    children.set(node.parentKey, siblings);
  }
  const rows: Row[] = [];
  const indexOf = new Map<string, number>();
  const stack = [...(children.get(undefined) ?? [])].reverse();
  while (stack.length > 0) {
    const node = stack.pop()!;
    if (indexOf.has(node.sessionKey)) continue;
    const parentIndex = node.parentKey === undefined ? undefined : indexOf.get(node.parentKey);
    indexOf.set(node.sessionKey, rows.length);
    rows.push({ node, index: rows.length, parentIndex });
    stack.push(...[...(children.get(node.sessionKey) ?? [])].reverse());
  }
  return rows;
}

function isFailed(node: SpawnTreeNode): boolean {
  const latest = node.runs.at(-1);
  return latest !== undefined && FAILED.has(latest.status);
}

function nameOf(node: SpawnTreeNode): string {
  if (node.label) return node.label;
  const prefix = `agent:${node.agentId}:`;
  return node.sessionKey.startsWith(prefix) ? node.sessionKey.slice(prefix.length) : node.sessionKey;
}

/** How long a run ran: to its end, or to `now` while it runs; `undefined` while queued. */
function runMs(run: SpawnTreeRun, now: number): number | undefined {
  return run.startedAt === undefined ? undefined : Math.max(0, (run.endedAt ?? now) - run.startedAt);
}

function totals(node: SpawnTreeNode, now: number): { ms: number; tokensIn: number; tokensOut: number } {
  let ms = 0;
  let tokensIn = 0;
  let tokensOut = 0;
  for (const run of node.runs) {
    ms += runMs(run, now) ?? 0;
    tokensIn += run.usage?.inputTokens ?? 0;
    tokensOut += run.usage?.outputTokens ?? 0;
  }
  return { ms, tokensIn, tokensOut };
}

/** The row's accessible name: who, status, runs, time, tokens, a failure and the announce. */
function describeNode(node: SpawnTreeNode, now: number): string {
  const sum = totals(node, now);
  const runs = node.runs.length;
  const parts = [
    `${nameOf(node)}: ${node.status}`,
    `${runs} run${runs === 1 ? '' : 's'}`,
    duration(sum.ms),
    `${compactNumber(sum.tokensIn)} tokens in, ${compactNumber(sum.tokensOut)} out`,
  ];
  const latest = node.runs.at(-1);
  if (latest && isFailed(node))
    parts.push(`failed (${latest.status})${latest.error ? `: ${latest.error}` : ''}`);
  // The latest announce: a sub-agent's later runs (woken by its own children) announce nothing.
  const announce = node.runs.filter((run) => run.announce).at(-1)?.announce;
  if (announce) parts.push(`announce to the parent ${announce.state}`);
  return parts.join(', ');
}

function describeRun(run: SpawnTreeRun, now: number): string {
  const ms = runMs(run, now);
  const lines = [`${run.status}${ms === undefined ? ' (queued)' : `, ${duration(ms)}`}`];
  if (run.usage) lines.push(`${run.usage.inputTokens} tokens in, ${run.usage.outputTokens} out`);
  if (run.toolCalls.length > 0) lines.push(`tools: ${run.toolCalls.map((call) => call.name).join(', ')}`);
  if (run.error) lines.push(`error: ${run.error}`);
  return lines.join('\n');
}

function barText(run: SpawnTreeRun, now: number): string {
  const ms = runMs(run, now);
  const time = ms === undefined ? 'queued' : duration(ms);
  return run.usage ? `${time} · ${compactNumber(run.usage.totalTokens)} tok` : time;
}
