import { mkdtemp, readdir, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { mediaFileName, pruneMediaDir, saveMedia } from './save-media.js';

let dir: string | undefined;
afterEach(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
  dir = undefined;
});

async function* chunks(...sizes: number[]): AsyncIterable<Uint8Array> {
  for (const size of sizes) yield new Uint8Array(size);
}

describe('saveMedia', () => {
  it('names files by message id with a safe extension from the file name or the type', () => {
    expect(mediaFileName('3EB0AB', { kind: 'image', mimeType: 'image/jpeg' })).toBe('3EB0AB.jpg');
    expect(mediaFileName('../x', { kind: 'document', fileName: 'Report.PDF' })).toBe('___x.pdf');
    expect(mediaFileName('id', { kind: 'document', fileName: 'evil.sh;rm -rf' })).toBe('id.bin');
    expect(mediaFileName('id', { kind: 'voice', mimeType: 'audio/ogg; codecs=opus' })).toBe('id.ogg');
  });

  it('saves up to the cap and leaves nothing behind when the stream goes over it', async () => {
    dir = await mkdtemp(join(tmpdir(), 'wa-media-'));
    expect(await saveMedia(chunks(10, 10), dir, 'a.bin', 20)).toEqual({
      ok: true,
      path: join(dir, 'a.bin'),
      size: 20,
    });
    expect(await saveMedia(chunks(10, 11), dir, 'b.bin', 20)).toMatchObject({ ok: false });
    expect(await readdir(dir)).toEqual(['a.bin']);
  });

  it('prunes the oldest files beyond the number kept', async () => {
    dir = await mkdtemp(join(tmpdir(), 'wa-media-'));
    for (const [i, name] of ['old', 'mid', 'new'].entries()) {
      await writeFile(join(dir, name), '');
      await utimes(join(dir, name), 1000 + i, 1000 + i);
    }
    await pruneMediaDir(dir, 2);
    expect((await readdir(dir)).sort()).toEqual(['mid', 'new']);
  });
});
