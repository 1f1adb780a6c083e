import type { Definition, Root } from 'mdast';

/** Link definitions (`[id]: https://...`) by identifier, for `[text][id]` references. */
export function collectDefinitions(root: Root): Map<string, Definition> {
  const found = new Map<string, Definition>();
  const visit = (node: { type: string; children?: unknown[] }): void => {
    if (node.type === 'definition') {
      const definition = node as Definition;
      if (!found.has(definition.identifier)) found.set(definition.identifier, definition);
    }
    for (const child of node.children ?? []) visit(child as { type: string; children?: unknown[] });
  };
  visit(root);
  return found;
}
