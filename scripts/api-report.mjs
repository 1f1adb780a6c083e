// API report of one package: runs API Extractor once per entry point of the package's `exports` and compares
// each public surface with etc/<name>.api.md. Run from a package folder (the turbo `api` task).
//
//   node ../../scripts/api-report.mjs                 check: fails when a report differs, has warnings or an
//                                                     undocumented export
//   node ../../scripts/api-report.mjs --local         update: rewrites the reports (`pnpm api:update`)
//   node ../../scripts/api-report.mjs --skip ./sub    leave the subpath ./sub out (repeatable)
//   node ../../scripts/api-report.mjs --members       also list undocumented members (never a failure)
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Extractor, ExtractorConfig } from '@microsoft/api-extractor';

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

let failed = false;
for (const [subpath, target] of Object.entries(packageJson.exports ?? {})) {
  if (values.skip.includes(subpath) || typeof target !== 'object' || !target.types) continue;
  const entry = `${packageJson.name}${subpath.slice(1)}`;
  const configObject = ExtractorConfig.loadFile(configPath);
  configObject.mainEntryPointFilePath = join('<projectFolder>', target.types);
  configObject.apiReport = { ...configObject.apiReport, reportFileName: reportNameOf(subpath) };
  const config = ExtractorConfig.prepare({
    configObject,
    configObjectFullPath: configPath,
    packageJsonFullPath: packageJsonPath,
  });
  const result = Extractor.invoke(config, { localBuild: values.local, showVerboseMessages: false });
  const report = `etc/${reportNameOf(subpath)}.api.md`;
  if (result.apiReportChanged && !values.local) {
    console.error(`${entry}: the public API differs from ${report}.`);
    console.error('Review the change, then run `pnpm api:update` and commit the report.');
  }
  const { exports, members } = undocumentedItems(
    readFileSync(join(config.reportTempFolder, config.reportConfigs[0].fileName), 'utf8'),
  );
  for (const item of exports) console.error(`${entry}: undocumented export: ${item}`);
  if (members.length > 0)
    console.log(`${entry}: ${members.length} undocumented members (--members lists them)`);
  if (values.members) for (const item of members) console.log(`  ${item}`);
  if (!result.succeeded || exports.length > 0) failed = true;
  else console.log(`${entry}: ${report} ${values.local ? 'written' : 'is up to date'}`);
}
if (failed) process.exitCode = 1;
