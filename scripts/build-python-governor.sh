#!/usr/bin/env bash
# Builds the Python example plugin into DIR (default bin/plugins/python):
# generates the tickemu.plugin.v2 Python stubs from the public .proto files
# (api/proto) with Debian's grpc_tools and copies the plugin script next to
# them as DIR/tickemu-plugin-pygov. Run scripts/install-python-plugin-deps.sh
# first. Use it with `tickemu run ... --plugin-dir DIR`.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
dir=${1:-$root/bin/plugins/python}
mkdir -p "$dir"
/usr/bin/python3 -m grpc_tools.protoc -I "$root/api/proto" \
	--python_out="$dir" --grpc_python_out="$dir" \
	"$root"/api/proto/tickemu/plugin/v2/plugin.proto \
	"$root"/api/proto/tickemu/plugin/v2/catalog.proto \
	"$root"/api/proto/tickemu/plugin/v2/governor.proto
install -m 0755 "$root/examples/python-governor/tickemu-plugin-pygov" "$dir/tickemu-plugin-pygov"
