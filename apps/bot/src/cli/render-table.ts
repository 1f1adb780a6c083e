/**
 * Renders rows as an aligned plain-text table (two spaces between columns; the last column is not
 * padded). Cells are cut to `maxWidth` characters.
 *
 * @param header - column titles
 * @param rows - cells, one array per row
 * @param maxWidth - the widest cell kept (default 60)
 * @returns the table text
 */
export function renderTable(
  header: readonly string[],
  rows: readonly (readonly string[])[],
  maxWidth = 60,
): string {
  const cut = (cell: string) => {
    const flat = cell.replace(/\s+/g, ' ');
    return flat.length > maxWidth ? `${flat.slice(0, maxWidth - 1)}…` : flat;
  };
  const all = [header, ...rows].map((row) => row.map(cut));
  const widths = header.map((_, i) => Math.max(...all.map((row) => (row[i] ?? '').length)));
  return all
    .map((row) =>
      row
        .map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i] ?? 0)))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}
