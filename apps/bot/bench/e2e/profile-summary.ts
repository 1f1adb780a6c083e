import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** Self time of one function or one package. */
export interface SelfTime {
  name: string;
  ms: number;
  share: number;
}

/** The top self-time functions and packages of a V8 `.cpuprofile`. */
export interface ProfileSummary {
  totalMs: number;
  /** Time outside JavaScript and idle excluded from the shares. */
  idleMs: number;
  functions: SelfTime[];
  packages: SelfTime[];
  /**
   * Time charged to the nearest Colloquy function on the stack (packages, plugins, apps), so the
   * cost of a library or of Node is charged to the code of ours that called it.
   */
  ours: SelfTime[];
}

/**
 * Sums the self time of every function of a `.cpuprofile` (`node --cpu-prof`), and per package
 * (`node_modules/<name>`, our `packages/<name>` and `plugins/<name>`, `node:` internals).
 *
 * @param file - the profile
 * @param top - how many rows to keep
 */
export function summariseProfile(file: string, top = 15): ProfileSummary {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const oursOf = new Map<number, string>();
  const nearestOurs = (id: number): string => {
    const known = oursOf.get(id);
    if (known !== undefined) return known;
    const frame = byId.get(id)?.callFrame;
    let name: string;
    if (frame && isOurs(frame.url))
      name = `${frame.functionName || '(anonymous)'} ${shortUrl(frame.url)}:${frame.lineNumber + 1}`;
    else {
      const up = parent.get(id);
      name = up === undefined ? '(no Colloquy frame)' : nearestOurs(up);
    }
    oursOf.set(id, name);
    return name;
  };
  const functions = new Map<string, number>();
  const packages = new Map<string, number>();
  const ours = new Map<string, number>();
  let totalMs = 0;
  let idleMs = 0;
  profile.samples.forEach((id, i) => {
    const ms = (profile.timeDeltas[i] ?? 0) / 1000;
    const frame = byId.get(id)?.callFrame;
    if (!frame) return;
    totalMs += ms;
    if (frame.functionName === '(idle)' || frame.functionName === '(program)') {
      idleMs += ms;
      return;
    }
    const where = shortUrl(frame.url);
    const name = `${frame.functionName || '(anonymous)'} ${where}${where ? `:${frame.lineNumber + 1}` : ''}`;
    functions.set(name, (functions.get(name) ?? 0) + ms);
    const pkg = packageOf(frame.url, frame.functionName);
    packages.set(pkg, (packages.get(pkg) ?? 0) + ms);
    const mine = nearestOurs(id);
    ours.set(mine, (ours.get(mine) ?? 0) + ms);
  });
  const busy = totalMs - idleMs;
  const rank = (map: Map<string, number>): SelfTime[] =>
    [...map.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([name, ms]) => ({ name, ms, share: busy > 0 ? ms / busy : 0 }));
  return { totalMs, idleMs, functions: rank(functions), packages: rank(packages), ours: rank(ours) };
}

/** Prints a summary as two short tables. */
export function printProfileSummary(title: string, summary: ProfileSummary): void {
  const busy = summary.totalMs - summary.idleMs;
  console.log(`\n${title}: ${busy.toFixed(0)} ms busy of ${summary.totalMs.toFixed(0)} ms sampled`);
  console.log('  top self time by package:');
  for (const row of summary.packages)
    console.log(
      `    ${(row.share * 100).toFixed(1).padStart(5)}%  ${row.ms.toFixed(0).padStart(6)} ms  ${row.name}`,
    );
  console.log('  top self time by function:');
  for (const row of summary.functions)
    console.log(
      `    ${(row.share * 100).toFixed(1).padStart(5)}%  ${row.ms.toFixed(0).padStart(6)} ms  ${row.name}`,
    );
  console.log('  top time charged to the nearest Colloquy function on the stack:');
  for (const row of summary.ours)
    console.log(
      `    ${(row.share * 100).toFixed(1).padStart(5)}%  ${row.ms.toFixed(0).padStart(6)} ms  ${row.name}`,
    );
}

function isOurs(url: string): boolean {
  return !url.includes('node_modules/') && /\/(packages|plugins|apps)\/[^/]+\/dist\//.test(url);
}

function shortUrl(url: string): string {
  const modules = url.lastIndexOf('node_modules/');
  if (modules >= 0) return url.slice(modules + 'node_modules/'.length);
  const ours = /\/((?:packages|plugins|apps)\/.+)$/.exec(url);
  return ours?.[1] ?? url.replace(/^file:\/\//, '');
}

function packageOf(url: string, functionName: string): string {
  if (url === '') return functionName.startsWith('(') ? functionName : '(native)';
  if (url.startsWith('node:')) return 'node: internals';
  const modules = url.lastIndexOf('node_modules/');
  if (modules >= 0) {
    const rest = url.slice(modules + 'node_modules/'.length).split('/');
    return rest[0]!.startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0]!;
  }
  const ours = /\/((?:packages|plugins|apps)\/[^/]+)\//.exec(url);
  return ours?.[1] ?? url;
}

// `tsx bench/e2e/profile-summary.ts <file.cpuprofile> [top]` prints one profile.
if (process.argv[1] && import.meta.url.endsWith(process.argv[1].split('/').pop() ?? '')) {
  const file = process.argv[2];
  if (!file) {
    console.error('usage: tsx bench/e2e/profile-summary.ts <file.cpuprofile> [top]');
    process.exit(1);
  }
  printProfileSummary(file, summariseProfile(file, Number(process.argv[3] ?? 15)));
}
