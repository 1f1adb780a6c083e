import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { extname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ColloquyError } from '@colloquy/core';

/** One file of the page bundle, held in memory. */
export interface StaticAsset {
  body: Buffer;
  contentType: string;
}

const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
};

/** The folder of the built page: `dist/static` beside this module (or beside `src` when run from source). */
export function staticDir(): string {
  const candidates = [new URL('../static/', import.meta.url), new URL('../../dist/static/', import.meta.url)];
  for (const url of candidates) {
    const dir = fileURLToPath(url);
    if (existsSync(join(dir, 'page', 'main.js'))) return dir;
  }
  throw new ColloquyError(
    'INTERNAL',
    'The web chat page is not built; run `pnpm --filter @colloquy/plugin-webchat build`.',
    { looked: candidates.map((u) => fileURLToPath(u)) },
  );
}

/**
 * Loads every servable file of the page bundle into memory, keyed by URL path (`/static/...`).
 * Only `.js`, `.css` and `.svg` files are served; look-ups are exact map hits, so no request path
 * ever reaches the file system.
 *
 * @throws ColloquyError `INTERNAL` when the bundle is missing (the package was not built)
 */
export async function loadStaticAssets(dir = staticDir()): Promise<Map<string, StaticAsset>> {
  const assets = new Map<string, StaticAsset>();
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  for (const entry of entries) {
    if (!entry.isFile()) continue;
    const contentType = TYPES[extname(entry.name)];
    if (!contentType) continue;
    const file = join(entry.parentPath, entry.name);
    const urlPath = `/static/${relative(dir, file).split(sep).join('/')}`;
    assets.set(urlPath, { body: await readFile(file), contentType });
  }
  return assets;
}
