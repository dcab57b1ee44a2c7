#!/usr/bin/env bash
# Builds the Python hang_cap policy (examples/hangcap-python) into DIR
# (default bin/plugins/python-hangcap): generates the tickemu.plugin.v2
# Python stubs from the public .proto files (api/proto) with Debian's
# grpc_tools and copies the plugin script next to them. Run
# scripts/install-python-plugin-deps.sh first.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
dir=${1:-$root/bin/plugins/python-hangcap}
mkdir -p "$dir"
/usr/bin/python3 -m grpc_tools.protoc -I "$root/api/proto" \
	--python_out="$dir" --grpc_python_out="$dir" \
	"$root"/api/proto/tickemu/plugin/v2/plugin.proto \
	"$root"/api/proto/tickemu/plugin/v2/catalog.proto \
	"$root"/api/proto/tickemu/plugin/v2/policy.proto
install -m 0755 "$root/examples/hangcap-python/tickemu-plugin-hang_cap" "$dir/tickemu-plugin-hang_cap"
