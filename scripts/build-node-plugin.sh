#!/usr/bin/env bash
# Builds a TypeScript example plugin (examples/*-node) into DIR: compiles
# SRC/src/main.ts with the TypeScript its package-lock.json pins, and puts
# the compiled plugin as the executable DIR/BINARY, its runtime
# node_modules, and the public .proto files it loads (api/proto, the
# PROTOs named) in DIR. Needs node (>= 18) and npm
# (scripts/install-node-plugin-deps.sh).
#
# The npm packages come from the npm registry exactly as package-lock.json
# pins them (npm ci). The installed node_modules are kept in a cache keyed
# by the lock file's dependencies ($TICKEMU_NODE_CACHE, default
# ${XDG_CACHE_HOME:-~/.cache}/tickemu/node): the examples pin the same
# packages, so the second build, and every later one, skips npm and takes
# a few seconds (tsc).
#
#   scripts/build-node-plugin.sh SRC DIR BINARY PROTO...
set -euo pipefail
[ $# -ge 4 ] || { echo "usage: build-node-plugin.sh SRC DIR BINARY PROTO... (e.g. governor.proto)" >&2; exit 2; }
root=$(cd "$(dirname "$0")/.." && pwd)
src=$(cd "$1" && pwd) dir=$2 bin=$3
shift 3
# The key: the lock file without the example's own name.
key=$(node -e '
	const l = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
	delete l.name; delete l.version; delete l.packages[""].name; delete l.packages[""].version;
	process.stdout.write(require("crypto").createHash("sha256").update(JSON.stringify(l)).digest("hex").slice(0, 16));
' "$src/package-lock.json")
cache=${TICKEMU_NODE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/tickemu/node}/$key
if [ ! -d "$cache/full/node_modules" ] || [ ! -d "$cache/prod/node_modules" ]; then
	mkdir -p "$(dirname "$cache")"
	tmp=$(mktemp -d "$cache.tmp.XXXXXX")
	trap 'rm -rf "$tmp"' EXIT
	mkdir "$tmp/full" "$tmp/prod"
	cp "$src/package.json" "$src/package-lock.json" "$tmp/full/"
	(cd "$tmp/full" && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
	cp -r "$tmp/full/." "$tmp/prod/"
	(cd "$tmp/prod" && npm prune --omit=dev --no-audit --no-fund --loglevel=error >/dev/null)
	# Another build may have filled the cache meanwhile: keep the first.
	mv -T "$tmp" "$cache" 2>/dev/null || true
fi
work=$(mktemp -d)
trap 'rm -rf "$work" ${tmp:+"$tmp"}' EXIT
cp "$src/tsconfig.json" "$work/"
cp -r "$src/src" "$work/src"
ln -s "$cache/full/node_modules" "$work/node_modules"
(cd "$work" && node node_modules/typescript/bin/tsc -p .)
mkdir -p "$dir/proto/tickemu/plugin/v2"
rm -rf "$dir/node_modules"
cp -r "$cache/prod/node_modules" "$dir/node_modules"
for p in "$@"; do
	cp "$root/api/proto/tickemu/plugin/v2/$p" "$dir/proto/tickemu/plugin/v2/"
done
# tickemu passes no PATH: the plugin names node by absolute path.
{ printf '#!%s\n' "$(command -v node)"; cat "$work/dist/main.js"; } >"$dir/$bin"
chmod 0755 "$dir/$bin"
