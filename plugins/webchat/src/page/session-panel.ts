import type { SessionRow } from '../protocol/frames.js';
import { compactNumber, duration, el } from './dom.js';

interface Node {
  row: SessionRow;
  children: Node[];
}

/**
 * The owner's live panel: the session tree (sub-agents under the session that spawned them) with
 * status, runtime and tokens. Running rows tick every second.
 */
export class SessionPanel {
  private rows: SessionRow[] = [];
  private clockSkew = 0;
  private ticker: number | undefined;

  constructor(
    private readonly tree: HTMLUListElement,
    private readonly meta: HTMLElement,
    /** Called with a session key when the owner opens a row. */
    private readonly onOpen: (key: string) => void = () => {},
    /** Called with a session key when the owner opens the spawn timeline of a row that has children. */
    private readonly onTimeline: (key: string) => void = () => {},
  ) {}

  /** Shows a fresh list from a `sessions` frame. */
  update(rows: readonly SessionRow[], total: number, serverNow: number): void {
    this.rows = [...rows];
    this.clockSkew = Date.now() - serverNow;
    const running = rows.filter((r) => r.status === 'running').length;
    this.meta.textContent = `${total} total${running ? ` · ${running} running` : ''}`;
    this.render();
    window.clearInterval(this.ticker);
    this.ticker = running ? window.setInterval(() => this.tick(), 1000) : undefined;
  }

  private render(): void {
    const byKey = new Map<string, Node>();
    for (const row of this.rows) byKey.set(row.key, { row, children: [] });
    const roots: Node[] = [];
    for (const node of byKey.values()) {
      const parent = node.row.spawnedBy === undefined ? undefined : byKey.get(node.row.spawnedBy);
      if (parent && parent !== node) parent.children.push(node);
      else roots.push(node);
    }
    const order = (a: Node, b: Node): number =>
      (a.row.startedAt ?? a.row.updatedAt) - (b.row.startedAt ?? b.row.updatedAt);
    roots.sort((a, b) => b.row.updatedAt - a.row.updatedAt);
    if (roots.length === 0) {
      this.tree.replaceChildren(el('li', 'tree-empty', 'No sessions yet.'));
      return;
    }
    const seen = new Set<Node>();
    const renderNode = (node: Node, depth: number): HTMLLIElement => {
      seen.add(node);
      const li = el('li', 'node');
      li.dataset.key = node.row.key;
      li.dataset.status = node.row.status;
      const kids = node.children.filter((c) => !seen.has(c)).sort(order);
      li.append(this.renderRow(node.row, kids.length > 0));
      if (kids.length > 0 && depth < 16) {
        const ul = el('ul', 'children');
        for (const child of kids) ul.append(renderNode(child, depth + 1));
        li.append(ul);
      }
      return li;
    };
    this.tree.replaceChildren(...roots.map((root) => renderNode(root, 0)));
  }

  private renderRow(row: SessionRow, spawned: boolean): HTMLDivElement {
    const div = el('div', 'row');
    const head = el('div', 'row-head');
    head.append(el('span', `pill pill-${row.status}`, row.status), el('span', 'row-name', displayName(row)));
    if (spawned) head.append(this.timelineButton(row));
    head.title = row.key;
    const facts = el('div', 'row-facts');
    facts.append(el('span', 'fact', row.kind));
    if (row.channel) facts.append(el('span', 'fact', row.channel));
    const runtime = el('span', 'fact runtime', this.runtimeText(row));
    runtime.dataset.key = row.key;
    facts.append(runtime);
    if (row.totalTokens !== undefined)
      facts.append(el('span', 'fact', `${compactNumber(row.totalTokens)} tok`));
    if (row.model) facts.append(el('span', 'fact model', row.model));
    div.append(head, facts);
    div.tabIndex = 0;
    div.setAttribute('role', 'button');
    div.setAttribute('aria-label', `Open the transcript of ${displayName(row)}`);
    div.addEventListener('click', () => this.onOpen(row.key));
    div.addEventListener('keydown', (event) => {
      if (event.key === 'Enter' || event.key === ' ') {
        event.preventDefault();
        this.onOpen(row.key);
      }
    });
    return div;
  }

  private timelineButton(row: SessionRow): HTMLButtonElement {
    const button = el('button', 'ghost timeline-button', 'Timeline');
    button.type = 'button';
    button.setAttribute('aria-label', `Open the spawn timeline of ${displayName(row)}`);
    button.addEventListener('click', (event) => {
      event.stopPropagation();
      this.onTimeline(row.key);
    });
    button.addEventListener('keydown', (event) => event.stopPropagation());
    return button;
  }

  private runtimeText(row: SessionRow): string {
    if (row.startedAt === undefined) return '–';
    const end = row.status === 'running' ? Date.now() - this.clockSkew : (row.endedAt ?? row.updatedAt);
    return duration(end - row.startedAt);
  }

  private tick(): void {
    if (!this.tree.isConnected || this.tree.closest('[hidden]')) return;
    for (const row of this.rows) {
      if (row.status !== 'running') continue;
      const span = this.tree.querySelector<HTMLElement>(`.runtime[data-key="${CSS.escape(row.key)}"]`);
      if (span) span.textContent = this.runtimeText(row);
    }
  }
}

/** `agent:main:webchat:dm:v_x` -> `webchat:dm:v_x`; a label wins. */
function displayName(row: SessionRow): string {
  if (row.label) return row.label;
  const prefix = `agent:${row.agentId}:`;
  const rest = row.key.startsWith(prefix) ? row.key.slice(prefix.length) : row.key;
  const sub = /^subagent:([0-9a-zA-Z]{8})[0-9a-zA-Z-]*$/.exec(rest);
  return sub ? `sub-agent ${sub[1]}` : rest;
}
