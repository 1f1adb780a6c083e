// API report of one package: runs API Extractor once per entry point of the package's `exports` and compares
// each public surface with etc/<name>.api.md. Run from a package folder (the turbo `api` task).
//
//   node ../../scripts/api-report.mjs                 check: fails when a report differs, has warnings or an
//                                                     undocumented export
//   node ../../scripts/api-report.mjs --local         update: rewrites the reports (`pnpm api:update`)
//   node ../../scripts/api-report.mjs --skip ./sub    leave the subpath ./sub out (repeatable)
//   node ../../scripts/api-report.mjs --members       also list undocumented members (never a failure)
//
// A door may name a type that another door of the same package exports (the main door's `SessionRecord`
// names `SessionKind`, which `./store` exports): API Extractor sees one entry point at a time and calls that
// a forgotten export, so the report notes which door exports it instead. A type no door exports stays a
// warning in the report.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Extractor, ExtractorConfig } from '@microsoft/api-extractor';
import ts from 'typescript';

const { values } = parseArgs({
  options: {
    local: { type: 'boolean', default: false },
    members: { type: 'boolean', default: false },
    skip: { type: 'string', multiple: true, default: [] },
  },
});
const packageFolder = process.cwd();
const packageJsonPath = join(packageFolder, 'package.json');
const packageJson = JSON.parse(readFileSync(packageJsonPath, 'utf8'));
const configPath = join(packageFolder, 'api-extractor.json');
if (!existsSync(configPath))
  throw new Error(`${packageJson.name}: no api-extractor.json in ${packageFolder}`);
mkdirSync(join(packageFolder, 'etc'), { recursive: true });
const unscopedName = packageJson.name.replace(/^@[^/]+\//, '');

/** The report name of a subpath: `.` is the package, `./testing/fakes` is `<name>-testing-fakes`. */
const reportNameOf = (subpath) =>
  subpath === '.' ? unscopedName : `${unscopedName}-${subpath.slice(2).replaceAll('/', '-')}`;

/**
 * The items the report marks "(undocumented)": the mark is the last comment line above the item, and an
 * item at column 1 is an export while an indented one is a member.
 */
function undocumentedItems(reportText) {
  const lines = reportText.split('\n');
  const exports = [];
  const members = [];
  lines.forEach((line, index) => {
    if (!line.trimStart().startsWith('//') || !line.includes('(undocumented)')) return;
    const item = lines[index + 1] ?? '';
    (item.startsWith(' ') ? members : exports).push(item.trim());
  });
  return { exports, members };
}

/** The names each reported door exports, read from its built declarations. */
function exportsByDoor(doors) {
  const files = doors.map(([, target]) => join(packageFolder, target.types));
  const program = ts.createProgram(files, {
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    skipLibCheck: true,
  });
  const checker = program.getTypeChecker();
  return doors.map(([subpath], index) => {
    const module = checker.getSymbolAtLocation(program.getSourceFile(files[index]));
    const names = module ? checker.getExportsOfModule(module).map((symbol) => symbol.name) : [];
    return [`${packageJson.name}${subpath.slice(1)}`, new Set(names)];
  });
}

const FORGOTTEN =
  /^(\s*)\/\/ Warning: \(ae-forgotten-export\) The symbol "([^"]+)" needs to be exported by the entry point .*$/;
const FORGOTTEN_FOOTER =
  /^\/\/ \S+ - \(ae-forgotten-export\) The symbol "([^"]+)" needs to be exported by the entry point .*$/;

/**
 * The report with each forgotten export that a sibling door exports turned into a note naming that door,
 * and the footer's warnings list left out when nothing is left in it.
 */
function noteSiblingExports(reportText, entry, doors) {
  const homeOf = (name) => doors.find(([door, names]) => door !== entry && names.has(name))?.[0];
  const lines = reportText.split('\n').flatMap((line) => {
    const inline = FORGOTTEN.exec(line);
    if (inline) {
      const home = homeOf(inline[2]);
      return home ? [`${inline[1]}// (${inline[2]} is exported by ${home})`] : [line];
    }
    const footer = FORGOTTEN_FOOTER.exec(line);
    return footer && homeOf(footer[1]) ? [] : [line];
  });
  const text = lines.join('\n');
  return text.replace(/\/\/ Warnings were encountered during analysis:\n\/\/\n\n/, '');
}

/** The scratch folder's own report messages (created, changed) are no news: etc/ is compared below. */
const SCRATCH_REPORT_MESSAGES = new Set([
  'console-api-report-copied',
  'console-api-report-created',
  'console-api-report-diff',
  'console-api-report-not-copied',
]);
function quietScratchReport(message) {
  if (!SCRATCH_REPORT_MESSAGES.has(message.messageId)) return;
  message.logLevel = 'none';
  message.handled = true;
}

const doors = Object.entries(packageJson.exports ?? {}).filter(
  ([subpath, target]) => !values.skip.includes(subpath) && typeof target === 'object' && target.types,
);
const doorExports = exportsByDoor(doors);
const finalFolder = join(packageFolder, '.api-report', 'final');
mkdirSync(finalFolder, { recursive: true });
let failed = false;
for (const [subpath, target] of doors) {
  const entry = `${packageJson.name}${subpath.slice(1)}`;
  const configObject = ExtractorConfig.loadFile(configPath);
  configObject.mainEntryPointFilePath = join('<projectFolder>', target.types);
  // API Extractor writes its report to a scratch folder; the notes above are applied before it is
  // compared with (or written to) etc/.
  configObject.apiReport = {
    ...configObject.apiReport,
    reportFileName: reportNameOf(subpath),
    reportFolder: finalFolder,
  };
  const config = ExtractorConfig.prepare({
    configObject,
    configObjectFullPath: configPath,
    packageJsonFullPath: packageJsonPath,
  });
  const report = `etc/${reportNameOf(subpath)}.api.md`;
  const fileName = config.reportConfigs[0].fileName;
  const result = Extractor.invoke(config, {
    localBuild: true,
    showVerboseMessages: false,
    messageCallback: quietScratchReport,
  });
  const reportText = noteSiblingExports(
    readFileSync(join(finalFolder, fileName), 'utf8'),
    entry,
    doorExports,
  );
  const reportPath = join(packageFolder, report);
  const differs = !existsSync(reportPath) || readFileSync(reportPath, 'utf8') !== reportText;
  if (values.local) writeFileSync(reportPath, reportText);
  else if (differs) {
    console.error(`${entry}: the public API differs from ${report}.`);
    console.error('Review the change, then run `pnpm api:update` and commit the report.');
  }
  const { exports, members } = undocumentedItems(reportText);
  for (const item of exports) console.error(`${entry}: undocumented export: ${item}`);
  if (members.length > 0)
    console.log(`${entry}: ${members.length} undocumented members (--members lists them)`);
  if (values.members) for (const item of members) console.log(`  ${item}`);
  // Check mode also fails on a warning API Extractor printed rather than wrote into the report.
  const warned = !values.local && result.warningCount > 0;
  if (!result.succeeded || warned || exports.length > 0 || (differs && !values.local)) failed = true;
  else console.log(`${entry}: ${report} ${values.local ? 'written' : 'is up to date'}`);
}
if (failed) process.exitCode = 1;
