#!/usr/bin/env bash
# Installs what the Python example plugins (examples/python-governor,
# examples/hangcap-python, examples/catchup-python) need:
# Debian's python3-grpcio (the gRPC runtime) and python3-grpc-tools (protoc
# and the gRPC code generator, to generate the tickemu.plugin.v2 stubs from
# api/proto). Does nothing when /usr/bin/python3 already imports both. Needs
# root or sudo; fails naming the packages otherwise.
set -euo pipefail
py=/usr/bin/python3
if [ -x "$py" ] && "$py" -c 'import grpc, grpc_tools.protoc' 2>/dev/null; then
	exit 0
fi
pkgs="python3 python3-grpcio python3-grpc-tools"
sudo=""
if [ "$(id -u)" != 0 ]; then
	if ! command -v sudo >/dev/null 2>&1; then
		echo "install-python-plugin-deps: need root or sudo to install the Debian packages: $pkgs" >&2
		exit 1
	fi
	sudo="sudo"
fi
if ! command -v apt-get >/dev/null 2>&1; then
	echo "install-python-plugin-deps: no apt-get: install $pkgs (Debian names) by hand" >&2
	exit 1
fi
echo "==> installing $pkgs (Debian packages) for the Python example plugin"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get install -y -q --no-install-recommends $pkgs ||
	{ $sudo apt-get update -q && $sudo apt-get install -y -q --no-install-recommends $pkgs; }
"$py" -c 'import grpc, grpc_tools.protoc' ||
	{ echo "install-python-plugin-deps: $py still cannot import grpc and grpc_tools: install $pkgs" >&2; exit 1; }
