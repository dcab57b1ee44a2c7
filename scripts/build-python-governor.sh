#!/usr/bin/env bash
# Builds the Python example plugin into DIR (default bin/plugins/python):
# generates the tickemu.plugin.v2 Python stubs from the public .proto files
# (api/proto) with Debian's grpc_tools and copies the plugin script next to
# them as DIR/tickemu-plugin-pygov. Run scripts/install-python-plugin-deps.sh
# first. Use it with `tickemu run ... --plugin-dir DIR`.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
exec bash "$root/scripts/build-python-plugin.sh" "$root/examples/python-governor/tickemu-plugin-pygov" "${1:-$root/bin/plugins/python}" governor.proto
