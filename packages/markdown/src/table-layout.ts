import type { AlignType, PhrasingContent, Table } from 'mdast';

/** A table wider than this many characters is shown as one line per row instead of a grid. */
const MAX_GRID_WIDTH = 60;

/** How a chat app without tables shows one: an aligned monospace grid, or one line per row. */
export type TableLayout =
  | { kind: 'grid'; lines: string[] }
  | { kind: 'rows'; rows: { lead: string; detail: string }[] };

/**
 * Lays a table out as plain text: cells lose their markup, links read `text (url)`. A grid when it
 * fits in 60 characters, else one row per line with the first cell leading and `Header: value`
 * pairs after it.
 */
export function layoutTable(table: Table): TableLayout {
  const [headRow, ...bodyRows] = table.children;
  const cells = (row: Table['children'][number] | undefined): string[] =>
    (row?.children ?? []).map((cell) => cellText(cell.children).trim());
  const head0 = cells(headRow);
  const body0 = bodyRows.map(cells);
  const columns = Math.max(head0.length, ...body0.map((row) => row.length));
  const fill = (row: string[]): string[] => Array.from({ length: columns }, (_, c) => row[c] ?? '');
  const head = fill(head0);
  const body = body0.map(fill);
  const widths = head.map((h, c) => Math.max(width(h), ...body.map((row) => width(row[c] ?? ''))));
  const total = widths.reduce((sum, w) => sum + w, 0) + 3 * (columns - 1);
  if (total > MAX_GRID_WIDTH) {
    return {
      kind: 'rows',
      rows: body.map(([lead = '', ...rest]) => ({
        lead,
        detail: rest
          .map((value, c) => (value === '' ? '' : head[c + 1] ? `${head[c + 1]}: ${value}` : value))
          .filter((part) => part !== '')
          .join(' · '),
      })),
    };
  }
  const align = table.align ?? [];
  const line = (row: string[]): string =>
    row
      .map((text, c) => pad(text, widths[c] ?? 0, align[c] ?? null))
      .join(' | ')
      .trimEnd();
  const rule = widths.map((w) => '-'.repeat(w)).join('-+-');
  return { kind: 'grid', lines: [line(head), rule, ...body.map(line)] };
}

function width(text: string): number {
  return [...text].length;
}

function pad(text: string, size: number, align: AlignType): string {
  const gap = size - width(text);
  if (align === 'right') return ' '.repeat(gap) + text;
  if (align === 'center') return ' '.repeat(Math.floor(gap / 2)) + text + ' '.repeat(Math.ceil(gap / 2));
  return text + ' '.repeat(gap);
}

/** The text of inline content as it reads without markup; links keep their address. */
export function cellText(nodes: readonly PhrasingContent[]): string {
  let out = '';
  for (const node of nodes) {
    switch (node.type) {
      case 'text':
      case 'inlineCode':
      case 'html':
        out += node.value;
        break;
      case 'break':
        out += ' ';
        break;
      case 'link': {
        const label = cellText(node.children);
        out +=
          label === '' || label === node.url || `mailto:${label}` === node.url
            ? node.url
            : `${label} (${node.url})`;
        break;
      }
      case 'image':
        out += node.alt ? `${node.alt} (${node.url})` : node.url;
        break;
      case 'footnoteReference':
        out += `[^${node.label ?? node.identifier}]`;
        break;
      case 'imageReference':
        out += node.alt ?? '';
        break;
      default:
        if ('children' in node) out += cellText(node.children as PhrasingContent[]);
    }
  }
  return out;
}
