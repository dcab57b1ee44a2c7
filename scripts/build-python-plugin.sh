#!/usr/bin/env bash
# Builds a Python example plugin into DIR: generates the tickemu.plugin.v2
# stubs it imports (plugin.proto, catalog.proto and the kind's PROTO, e.g.
# policy.proto) from the public api/proto with Debian's python3-grpc-tools,
# and installs the plugin file next to them, executable. The plugin finds
# the stubs relative to itself (tickemu passes it no PYTHONPATH).
# Run scripts/install-python-plugin-deps.sh first.
#
#   scripts/build-python-plugin.sh FILE DIR PROTO
set -euo pipefail
[ $# = 3 ] || { echo "usage: build-python-plugin.sh FILE DIR PROTO (e.g. policy.proto)" >&2; exit 2; }
root=$(cd "$(dirname "$0")/.." && pwd)
file=$1 dir=$2 proto=$3
mkdir -p "$dir"
/usr/bin/python3 -m grpc_tools.protoc -I "$root/api/proto" \
	--python_out="$dir" --grpc_python_out="$dir" \
	"$root"/api/proto/tickemu/plugin/v2/plugin.proto \
	"$root"/api/proto/tickemu/plugin/v2/catalog.proto \
	"$root/api/proto/tickemu/plugin/v2/$proto"
install -m 0755 "$file" "$dir/$(basename "$file")"
