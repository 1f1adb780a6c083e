#!/usr/bin/env bash
# A second, shorter pass on another Node: with the workspace as `.ci/run` installed and built it (the
# installed packages are plain JavaScript plus better-sqlite3's Node-API binary, which loads on any
# supported Node), it puts the newest Node in the given range from the registry's `node` package first
# on PATH, starts the app until it is ready, stops it with SIGTERM (expecting exit code 0), and runs
# the core, runtime and store-sqlite tests. vitest runs directly: turbo's cache does not know which
# Node ran a task.
#
# Usage: scripts/node-pass.sh <range>   (run by .ci/run as `scripts/node-pass.sh ^22.18.0`)
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
range="${1:?usage: scripts/node-pass.sh <range of the node package, e.g. ^22.18.0>}"
started=$SECONDS
app_pid=""
state="$(mktemp -d "${TMPDIR:-/tmp}/colloquy-node-pass-XXXXXX")"

cleanup() {
  if [ -n "$app_pid" ] && kill -0 "$app_pid" 2>/dev/null; then kill -KILL "$app_pid" 2>/dev/null || true; fi
  rm -rf "$state"
}
trap cleanup EXIT

export PATH="$(bash "$root/scripts/registry-node.sh" "$range"):$PATH"
version="$(node --version)"
step() { echo "node ${version} pass: $* ($((SECONDS - started)) s)"; }
cd "$root"
if [ ! -f apps/bot/dist/cli.js ]; then
  echo "node ${version} pass: apps/bot/dist/cli.js is missing; run pnpm install and pnpm build first" >&2
  exit 1
fi

# 1. The app starts and stops cleanly on SIGTERM.
step "starting the app"
echo '{ gateway: { port: 0 }, channels: { webchat: { port: 0 } } }' >"$state/colloquy.json5"
COLLOQUY_CONFIG="$state/colloquy.json5" COLLOQUY_STATE_DIR="$state/state" \
  node apps/bot/dist/cli.js start --log-format pretty >"$state/app.log" 2>&1 &
app_pid=$!
for _ in $(seq 1 600); do
  grep -q 'Colloquy is running.' "$state/app.log" && break
  kill -0 "$app_pid" 2>/dev/null || break
  sleep 0.2
done
if ! grep -q 'Colloquy is running.' "$state/app.log"; then
  echo "node ${version} pass: the app did not become ready:" >&2
  cat "$state/app.log" >&2
  exit 1
fi
kill -TERM "$app_pid"
code=0
wait "$app_pid" || code=$?
app_pid=""
if [ "$code" != 0 ]; then
  echo "node ${version} pass: the app exited $code after SIGTERM:" >&2
  cat "$state/app.log" >&2
  exit 1
fi
step "app ready and stopped cleanly on SIGTERM"

# 2. The packages that touch Node's APIs and the native SQLite binding most.
for pkg in core runtime store-sqlite; do
  step "testing @colloquy/$pkg"
  (cd "packages/$pkg" && pnpm exec vitest run --reporter=dot)
done
step "passed"
