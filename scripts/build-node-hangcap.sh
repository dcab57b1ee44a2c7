#!/usr/bin/env bash
# Builds the TypeScript hang_cap policy (examples/hangcap-node) into DIR
# (default bin/plugins/node-hangcap): installs its npm dependencies exactly
# as package-lock.json pins them (npm ci, from the npm registry), compiles
# it with the pinned TypeScript, and puts the compiled plugin, its
# node_modules and the public .proto files it loads (api/proto) in DIR, with
# the executable DIR/tickemu-plugin-hang_cap. Needs node (>= 18) and npm
# (scripts/install-node-plugin-deps.sh).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
dir=${1:-$root/bin/plugins/node-hangcap}
src=$root/examples/hangcap-node
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp "$src/package.json" "$src/package-lock.json" "$src/tsconfig.json" "$work/"
cp -r "$src/src" "$work/src"
(cd "$work" && npm ci --no-audit --no-fund --loglevel=error >/dev/null && npx --no-install tsc -p .)
mkdir -p "$dir/proto/tickemu/plugin/v2"
rm -rf "$dir/node_modules"
(cd "$work" && npm prune --omit=dev --no-audit --no-fund --loglevel=error >/dev/null)
cp -r "$work/node_modules" "$dir/node_modules"
cp "$root"/api/proto/tickemu/plugin/v2/{plugin,catalog,policy}.proto "$dir/proto/tickemu/plugin/v2/"
# tickemu passes no PATH: the plugin names node by absolute path.
{ printf '#!%s\n' "$(command -v node)"; cat "$work/dist/main.js"; } >"$dir/tickemu-plugin-hang_cap"
chmod 0755 "$dir/tickemu-plugin-hang_cap"
