#!/usr/bin/env bash
# Builds the Python hang_cap policy (examples/hangcap-python) into DIR
# (default bin/plugins/python-hangcap): generates the tickemu.plugin.v2
# Python stubs from the public .proto files (api/proto) with Debian's
# grpc_tools and copies the plugin script next to them. Run
# scripts/install-python-plugin-deps.sh first.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
exec bash "$root/scripts/build-python-plugin.sh" "$root/examples/hangcap-python/tickemu-plugin-hang_cap" "${1:-$root/bin/plugins/python-hangcap}" policy.proto
