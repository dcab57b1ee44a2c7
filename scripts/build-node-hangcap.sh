#!/usr/bin/env bash
# Builds the TypeScript hang_cap policy (examples/hangcap-node) into DIR
# (default bin/plugins/node-hangcap): installs its npm dependencies exactly
# as package-lock.json pins them (npm ci, from the npm registry), compiles
# it with the pinned TypeScript, and puts the compiled plugin, its
# node_modules and the public .proto files it loads (api/proto) in DIR, with
# the executable DIR/tickemu-plugin-hang_cap (scripts/build-node-plugin.sh,
# which caches the installed packages). Needs node (>= 18) and npm
# (scripts/install-node-plugin-deps.sh).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
exec bash "$root/scripts/build-node-plugin.sh" "$root/examples/hangcap-node" "${1:-$root/bin/plugins/node-hangcap}" \
	tickemu-plugin-hang_cap plugin.proto catalog.proto policy.proto
