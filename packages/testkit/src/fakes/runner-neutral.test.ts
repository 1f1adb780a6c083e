import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const here = dirname(fileURLToPath(import.meta.url));

/** Every module specifier `file` imports, followed through relative imports. */
function importGraph(file: string, seen = new Set<string>()): Set<string> {
  const specifiers = new Set<string>();
  if (seen.has(file)) return specifiers;
  seen.add(file);
  const source = readFileSync(file, 'utf8');
  for (const match of source.matchAll(/(?:import|export)[^'"]*from\s+'([^']+)'/g)) {
    const specifier = match[1] as string;
    specifiers.add(specifier);
    if (specifier.startsWith('.')) {
      const target = resolve(dirname(file), specifier.replace(/\.js$/, '.ts'));
      for (const nested of importGraph(target, seen)) specifiers.add(nested);
    }
  }
  return specifiers;
}

describe('runner-neutral test tools', () => {
  it.each(['scripted-model.ts', 'memory-channel.ts', 'record-factories.ts', '../index.ts'])(
    '%s imports neither vitest nor any package but core',
    (file) => {
      const packages = [...importGraph(resolve(here, file))].filter(
        (s) =>
          !s.startsWith('.') &&
          !s.startsWith('node:') &&
          s !== '@colloquy/core' &&
          !s.startsWith('@colloquy/core/'),
      );
      expect(packages).toEqual([]);
    },
  );
});
