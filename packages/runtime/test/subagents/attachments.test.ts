import { createHash } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isColloquyError } from '@colloquy/core';
import type { AttachmentReceipt } from '@colloquy/core/gateway';
import { afterEach, describe, expect, it } from 'vitest';
import { removeAttachments, writeAttachments } from '../../src/subagents/attachment-files.js';
import { waitFor } from '../support/harness.js';
import {
  call,
  isSubagent,
  MAIN,
  type SubagentHarness,
  type SubagentHarnessOptions,
  seedMain,
  startSubagentHarness,
} from './subagents-fixture.js';

let h: SubagentHarness | undefined;
const dirs: string[] = [];
afterEach(async () => {
  await h?.close();
  h = undefined;
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 1, 2, 3]);
const SECRET = 'the-secret-plan-text';
const ENABLED = { tools: { sessions_spawn: { attachments: { enabled: true } } } };
const sha = (bytes: Buffer | string) => createHash('sha256').update(bytes).digest('hex');

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'colloquy-attach-'));
  dirs.push(dir);
  return dir;
}

/** Every file under a folder (relative paths), for "nothing was written" checks. */
function filesUnder(root: string): string[] {
  if (!existsSync(root)) return [];
  const out: string[] = [];
  const walk = (dir: string, prefix: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const rel = prefix ? `${prefix}/${entry.name}` : entry.name;
      if (entry.isDirectory()) walk(join(dir, entry.name), rel);
      else out.push(rel);
    }
  };
  walk(root, '');
  return out;
}

async function boot(options: Partial<SubagentHarnessOptions> = {}): Promise<SubagentHarness> {
  h = await startSubagentHarness({
    config: ENABLED,
    script: (r) => (isSubagent(r) ? 'read them' : 'ok'),
    ...options,
  });
  await seedMain(h.store);
  return h;
}

type Spawned = {
  status: string;
  error?: string;
  runId: string;
  childSessionKey: string;
  attachments?: AttachmentReceipt;
};

describe('attachments end to end', () => {
  it('writes the files with a manifest, returns their sha256, tells the child, and keeps the content out of the transcript', async () => {
    let parentSteps = 0;
    const harness = await boot({
      script: (r) => {
        if (isSubagent(r)) return 'read them';
        parentSteps++;
        if (parentSteps > 1) return 'spawned';
        return {
          toolCalls: [
            {
              name: 'sessions_spawn',
              arguments: {
                task: 'Read the files',
                attachments: [
                  { name: 'notes.md', content: `# Notes\n${SECRET}` },
                  {
                    name: 'pixel.png',
                    content: PNG.toString('base64'),
                    encoding: 'base64',
                    mimeType: 'image/png',
                  },
                ],
              },
            },
          ],
        };
      },
    });
    await harness.runtime.gateway.call('agent', {
      sessionKey: MAIN,
      message: 'hand these over',
      deliver: false,
    });
    const store = harness.store;
    await waitFor(async () => (await store.listOutbox({ statuses: ['delivered'] })).length === 1, 4000);

    const result = (await store.readTail(MAIN, 50)).find(
      (m) => m.role === 'toolResult' && m.toolName === 'sessions_spawn',
    )!;
    const receipt = (JSON.parse(result.content as string) as Spawned).attachments!;
    expect(receipt.files).toEqual([
      { name: 'notes.md', bytes: Buffer.byteLength(`# Notes\n${SECRET}`), sha256: sha(`# Notes\n${SECRET}`) },
      { name: 'pixel.png', bytes: PNG.length, sha256: sha(PNG), mimeType: 'image/png' },
    ]);
    expect(receipt.dir.startsWith(harness.workspaceDir)).toBe(true);
    expect(receipt.dir).toMatch(/\/\.colloquy\/attachments\/[0-9a-f-]{36}$/);
    expect(receipt.manifest).toBe('manifest.json');

    const childRequest = harness.model.requests.find(isSubagent)!;
    expect(childRequest.system).toContain(
      `Files for this task are in ${receipt.dir} (listed in manifest.json)`,
    );

    // The parent's stored transcript holds a placeholder, never the content.
    const transcript = JSON.stringify(await store.readTail(MAIN, 50));
    expect(transcript).not.toContain(SECRET);
    expect(transcript).not.toContain(PNG.toString('base64'));
    expect(transcript).toContain(`[attachment content omitted: ${PNG.length} bytes, sha256 ${sha(PNG)}]`);

    // Kept child, retainOnSessionKeep false: the folder goes once the announce is delivered.
    await waitFor(() => !existsSync(receipt.dir), 3000, 'the attachments were removed');
  });

  it('writes what the child reads, and keeps it with retainOnSessionKeep until the session is deleted', async () => {
    const harness = await boot({
      config: { tools: { sessions_spawn: { attachments: { enabled: true, retainOnSessionKeep: true } } } },
    });
    const spawned = await call<Spawned>((await harness.tools(MAIN)).sessions_spawn, {
      task: 'Read',
      attachments: [{ name: 'a.txt', content: 'alpha' }],
      attachAs: { mountPath: '/mnt/task' },
    });
    expect(spawned.attachments?.dir).toBe('/mnt/task');
    const store = harness.store;
    await waitFor(
      async () => (await store.getOutbox(spawned.childSessionKey, spawned.runId))?.status === 'delivered',
    );
    const [folder] = filesUnder(harness.workspaceDir).filter((f) => f.endsWith('/a.txt'));
    expect(folder).toBeDefined();
    const host = join(harness.workspaceDir, folder!);
    expect(readFileSync(host, 'utf8')).toBe('alpha');
    const manifest = JSON.parse(readFileSync(join(host, '..', 'manifest.json'), 'utf8')) as {
      files: unknown[];
    };
    expect(manifest.files).toEqual([{ name: 'a.txt', bytes: 5, sha256: sha('alpha') }]);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(existsSync(host)).toBe(true);
    expect(harness.model.requests.find(isSubagent)?.system).toContain('Files for this task are in /mnt/task');

    await harness.runtime.gateway.call('sessions.delete', { key: spawned.childSessionKey });
    await waitFor(() => !existsSync(host), 3000, 'removed with the session');
  });

  it('removes the folder with a "delete" child, unlinking a planted symlink without touching its target', async () => {
    const outside = tempDir();
    writeFileSync(join(outside, 'precious.txt'), 'keep me');
    const harness = await boot({
      script: (r) => (isSubagent(r) ? { text: 'done', delayMs: 150 } : 'ok'),
    });
    const spawned = await call<Spawned>((await harness.tools(MAIN)).sessions_spawn, {
      task: 'Read',
      cleanup: 'delete',
      attachments: [{ name: 'a.txt', content: 'alpha' }],
    });
    const dir = spawned.attachments!.dir;
    symlinkSync(join(outside, 'precious.txt'), join(dir, 'link-to-file'));
    symlinkSync(outside, join(dir, 'link-to-dir'));
    await waitFor(async () => (await harness.store.getSession(spawned.childSessionKey)) === undefined, 3000);
    await waitFor(() => !existsSync(dir), 3000);
    expect(readFileSync(join(outside, 'precious.txt'), 'utf8')).toBe('keep me');
    expect(readdirSync(outside)).toEqual(['precious.txt']);
  });
});

describe('attachments refused before anything is written', () => {
  const cases: [string, Record<string, unknown>, string][] = [
    ['a parent-folder name', { name: '../escape.txt', content: 'x' }, '".."'],
    ['a bare ".."', { name: '..', content: 'x' }, '".."'],
    ['a nested path', { name: 'dir/file.txt', content: 'x' }, 'path separator'],
    ['an absolute path', { name: '/etc/passwd', content: 'x' }, 'path separator'],
    ['a backslash path', { name: '..\\..\\win.ini', content: 'x' }, '".."'],
    ['a control character', { name: 'bell\u0007.txt', content: 'x' }, 'control character'],
    ['bad base64', { name: 'b.bin', content: 'abc', encoding: 'base64' }, 'not valid base64'],
    [
      'base64 with a line break',
      { name: 'b.bin', content: 'QUJD\nREVG', encoding: 'base64' },
      'not valid base64',
    ],
    ['a file over maxFileBytes', { name: 'big.txt', content: 'x'.repeat(65) }, 'maxFileBytes'],
  ];

  it.each(cases)('refuses %s with a clear error', async (_what, attachment, expected) => {
    const harness = await boot({
      config: { tools: { sessions_spawn: { attachments: { enabled: true, maxFileBytes: 64 } } } },
    });
    const result = await call<Spawned>((await harness.tools(MAIN)).sessions_spawn, {
      task: 'x',
      attachments: [{ name: 'fine.txt', content: 'ok' }, attachment],
    });
    expect(result.status).toBe('error');
    expect(result.error).toContain(expected);
    expect(filesUnder(harness.workspaceDir)).toEqual([]);
    expect(await harness.store.listSessions({ kinds: ['subagent'] })).toEqual([]);
  });

  it.each([
    [
      'duplicate names (case-insensitive)',
      [
        { name: 'A.txt', content: '1' },
        { name: 'a.TXT', content: '2' },
      ],
      'duplicates',
    ],
    [
      'too many files',
      [
        { name: '1', content: '' },
        { name: '2', content: '' },
        { name: '3', content: '' },
      ],
      'maxFiles',
    ],
    [
      'too many bytes in total',
      [
        { name: '1', content: 'x'.repeat(60) },
        { name: '2', content: 'y'.repeat(60) },
      ],
      'maxTotalBytes',
    ],
  ])('refuses %s', async (_what, attachments, expected) => {
    const harness = await boot({
      config: {
        tools: {
          sessions_spawn: {
            attachments: { enabled: true, maxFiles: 2, maxFileBytes: 64, maxTotalBytes: 100 },
          },
        },
      },
    });
    const result = await call<Spawned>((await harness.tools(MAIN)).sessions_spawn, {
      task: 'x',
      attachments,
    });
    expect(result).toEqual({ status: 'error', error: expect.stringContaining(expected) });
    expect(filesUnder(harness.workspaceDir)).toEqual([]);
  });

  it('refuses attachments while they are turned off', async () => {
    const harness = await boot({ config: {} });
    const result = await call<Spawned>((await harness.tools(MAIN)).sessions_spawn, {
      task: 'x',
      attachments: [{ name: 'a.txt', content: 'x' }],
    });
    expect(result).toEqual({
      status: 'forbidden',
      error: expect.stringContaining('tools.sessions_spawn.attachments.enabled'),
    });
    expect(filesUnder(harness.workspaceDir)).toEqual([]);
  });

  it('refuses them at the gateway too, for callers that skip the tool', async () => {
    const harness = await boot();
    const error = await harness.runtime.gateway
      .call('agent', {
        sessionKey: 'agent:main:subagent:direct-call',
        message: 'x',
        spawnedBy: MAIN,
        session: { attachments: [{ name: '../../x', content: 'x' }] },
      })
      .catch((e: unknown) => e);
    expect(isColloquyError(error) && error.code).toBe('INVALID_ARGUMENT');
    expect(filesUnder(harness.workspaceDir)).toEqual([]);
    expect(await harness.store.getSession('agent:main:subagent:direct-call')).toBeUndefined();
  });
});

describe('attachment folders are symlink-safe', () => {
  const files = [{ name: 'a.txt', encoding: 'utf8' as const, content: 'alpha', bytes: 5 }];

  it.each([
    ['the attachments folder', ['.colloquy'], 'attachments'],
    ['the .colloquy folder', [], '.colloquy'],
  ])(
    'refuses to write through a symlinked %s, and writes nothing outside',
    async (_what, parents, linked) => {
      const workspace = tempDir();
      const outside = tempDir();
      mkdirSync(join(workspace, ...parents), { recursive: true });
      symlinkSync(outside, join(workspace, ...parents, linked));
      const error = await writeAttachments({ workspace, files, now: 0 }).catch((e: unknown) => e);
      expect(isColloquyError(error) && error.code).toBe('FORBIDDEN');
      expect((error as Error).message).toContain('symbolic link');
      expect(readdirSync(outside)).toEqual([]);
    },
  );

  it('refuses a target folder that already exists as a symlink, and leaves its target alone', async () => {
    const workspace = tempDir();
    const outside = tempDir();
    mkdirSync(join(workspace, '.colloquy', 'attachments'), { recursive: true });
    symlinkSync(outside, join(workspace, '.colloquy', 'attachments', 'fixed-id'));
    const error = await writeAttachments({ workspace, files, now: 0, id: 'fixed-id' }).catch(
      (e: unknown) => e,
    );
    expect(isColloquyError(error) && error.code).toBe('FORBIDDEN');
    expect(readdirSync(outside)).toEqual([]);
  });

  it('creates each file exclusively: a name already present is refused and the folder rolled back', async () => {
    const workspace = tempDir();
    const twice = [...files, { ...files[0]! }];
    const error = await writeAttachments({ workspace, files: twice, now: 0, id: 'one' }).catch(
      (e: unknown) => e,
    );
    expect(isColloquyError(error) && error.code).toBe('FORBIDDEN');
    expect((error as Error).message).toContain('already exists');
    expect(readdirSync(join(workspace, '.colloquy', 'attachments'))).toEqual([]);
  });

  it('removes only links, never their targets, even when the attachments folder itself is a link', async () => {
    const workspace = tempDir();
    const outside = tempDir();
    writeFileSync(join(outside, 'keep.txt'), 'keep');
    const written = await writeAttachments({ workspace, files, now: 0 });
    symlinkSync(join(outside, 'keep.txt'), join(written.hostDir, 'to-file'));
    symlinkSync(outside, join(written.hostDir, 'to-dir'));
    expect(await removeAttachments(workspace)).toBe(true);
    expect(existsSync(written.hostDir)).toBe(false);
    expect(readdirSync(outside)).toEqual(['keep.txt']);

    mkdirSync(join(workspace, '.colloquy'), { recursive: true });
    symlinkSync(outside, join(workspace, '.colloquy', 'attachments'));
    expect(await removeAttachments(workspace)).toBe(true);
    expect(readdirSync(outside)).toEqual(['keep.txt']);
    expect(readFileSync(join(outside, 'keep.txt'), 'utf8')).toBe('keep');
  });
});
