#!/usr/bin/env node
// The README examples check: every ```ts block of every README.md in the repository is compiled
// against the built packages (strict, one module per block), and the blocks marked `runnable` are run
// with node, one at a time, with a time limit and no network but the loopback interface.
//
// Info-string flags (after the language, e.g. ```ts runnable):
//   (none)     compiled; names must be imported or declared in the block
//   runnable   compiled, then run; it must exit 0 within the time limit
//   continues  compiled after the README's first compiled block (its example), whose names it uses; not run
//   fragment   neither compiled nor run: a piece of a larger program (use sparingly)
//
// Usage: node check-readme-examples.mjs [README path filter ...] [--timeout-ms N]
// Needs `pnpm build` first (turbo runs it as this package's `test` task, after every build).

import { spawn } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, '../..');
const work = join(here, 'test-output');
const SKIP_DIRS = new Set([
  'node_modules',
  'dist',
  '.git',
  '.turbo',
  '.changeset',
  'test-output',
  'coverage',
]);
const LANGUAGES = new Set(['ts', 'typescript', 'mts']);
const FLAGS = new Set(['runnable', 'fragment', 'continues']);

const args = process.argv.slice(2);
const timeoutArg = args.indexOf('--timeout-ms');
const timeoutMs = timeoutArg >= 0 ? Number(args.splice(timeoutArg, 2)[1]) : 60_000;
const filters = args;

/** Every README.md below `dir`, outside build output and dependencies. */
function findReadmes(dir) {
  const found = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.isDirectory()) {
      if (!SKIP_DIRS.has(entry.name) && !entry.name.startsWith('.'))
        found.push(...findReadmes(join(dir, entry.name)));
    } else if (entry.name === 'README.md') {
      found.push(join(dir, entry.name));
    }
  }
  return found;
}

/** The TypeScript blocks of one README: `{ readme, line (1-based, first code line), flags, code }`. */
function extractBlocks(file) {
  const readme = relative(root, file);
  const lines = readFileSync(file, 'utf8').split('\n');
  const blocks = [];
  let open;
  lines.forEach((text, index) => {
    const fence = /^(\s*)(`{3,})\s*([\w-]*)\s*(.*)$/.exec(text);
    if (!open) {
      if (fence)
        open = {
          fence: fence[2],
          language: fence[3],
          words: fence[4].split(/\s+/).filter(Boolean),
          start: index + 1,
          code: [],
        };
      return;
    }
    if (fence && fence[2].length >= open.fence.length && fence[3] === '' && fence[4] === '') {
      if (LANGUAGES.has(open.language)) {
        const unknown = open.words.filter((w) => !FLAGS.has(w));
        if (unknown.length > 0)
          throw new Error(
            `${readme}:${open.start}: unknown flag ${unknown.join(', ')} (use ${[...FLAGS].join(' or ')})`,
          );
        const flags = new Set(open.words);
        const code = open.code;
        const lineMap = code.map((_, i) => open.start + 1 + i);
        const first = blocks.find((b) => !b.flags.has('fragment'));
        if (flags.has('continues') && !first)
          throw new Error(`${readme}:${open.start}: nothing before this block to continue`);
        blocks.push({
          readme,
          line: open.start + 1,
          flags,
          code: flags.has('continues') ? [...first.code, ...code] : code,
          lineMap: flags.has('continues') ? [...first.lineMap, ...lineMap] : lineMap,
        });
      }
      open = undefined;
      return;
    }
    open.code.push(text);
  });
  return blocks;
}

/** Writes one module per block and compiles them together; returns diagnostics mapped to README lines. */
function compile(blocks) {
  rmSync(work, { recursive: true, force: true });
  mkdirSync(work, { recursive: true });
  for (const block of blocks) {
    block.file = join(work, `${block.readme.replace(/[^\w]+/g, '_')}_L${block.line}.ts`);
    // `export {}` makes every block a module (top-level await, no shared globals between blocks).
    writeFileSync(block.file, `${block.code.join('\n')}\nexport {};\n`);
  }
  const base = ts.readConfigFile(join(root, 'tsconfig.base.json'), ts.sys.readFile).config;
  const { options } = ts.convertCompilerOptionsFromJson(
    {
      ...base.compilerOptions,
      outDir: join(work, 'out'),
      rootDir: work,
      declaration: false,
      declarationMap: false,
      sourceMap: false,
    },
    work,
  );
  const program = ts.createProgram(
    blocks.map((b) => b.file),
    options,
  );
  const diagnostics = [...ts.getPreEmitDiagnostics(program), ...program.emit().diagnostics];
  const byFile = new Map(blocks.map((b) => [b.file, b]));
  return diagnostics.map((d) => {
    const message = ts.flattenDiagnosticMessageText(d.messageText, '\n');
    const block = d.file && byFile.get(d.file.fileName);
    if (!block || d.start === undefined) return `${d.file?.fileName ?? 'tsc'}: ${message}`;
    const { line, character } = d.file.getLineAndCharacterOfPosition(d.start);
    return `${block.readme}:${block.lineMap[line] ?? block.line}:${character + 1}: TS${d.code} ${message}`;
  });
}

/** Runs one compiled block with node; resolves with undefined on success, else what went wrong. */
function runBlock(block) {
  const out = join(work, 'out', relative(work, block.file).replace(/\.ts$/, '.js'));
  const cwd = join(work, `run_L${block.line}_${block.readme.replace(/[^\w]+/g, '_')}`);
  mkdirSync(cwd, { recursive: true });
  return new Promise((done) => {
    const child = spawn(process.execPath, ['--import', join(here, 'loopback-only.mjs'), out], {
      cwd,
      env: { ...process.env, NODE_ENV: 'test' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk) => {
      output += chunk;
    });
    child.stderr.on('data', (chunk) => {
      output += chunk;
    });
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, timeoutMs);
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      const where = `${block.readme}:${block.line}`;
      if (timedOut) done(`${where}: did not exit within ${timeoutMs} ms\n${output}`);
      else if (code === 0) done(undefined);
      else done(`${where}: exited with ${code ?? signal}\n${output}`);
    });
  });
}

const readmes = findReadmes(root).filter(
  (f) => filters.length === 0 || filters.some((p) => relative(root, f).includes(p)),
);
const blocks = readmes.flatMap(extractBlocks);
const checked = blocks.filter((b) => !b.flags.has('fragment'));
const runnable = checked.filter((b) => b.flags.has('runnable') && !b.flags.has('continues'));
const failures = compile(checked);
for (const failure of failures) console.error(failure);
// Runs only when everything compiled: a block that does not compile has no output to run.
let passed = 0;
if (failures.length === 0) {
  for (const block of runnable) {
    const started = Date.now();
    const failure = await runBlock(block);
    if (failure) failures.push(failure);
    else passed += 1;
    console.log(
      `${failure ? 'FAIL' : 'ok  '} ${block.readme}:${block.line} (runnable, ${Date.now() - started} ms)`,
    );
    if (failure) console.error(failure.trimEnd());
  }
}
const fragments = blocks.length - checked.length;
console.log(
  `readme examples: ${checked.length} compiled, ${passed} of ${runnable.length} runnable ran, ${fragments} fragments skipped, in ${readmes.length} READMEs; ${failures.length} failed`,
);
process.exit(failures.length === 0 ? 0 : 1);
