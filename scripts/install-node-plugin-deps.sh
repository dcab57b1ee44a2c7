#!/usr/bin/env bash
# Installs what the TypeScript example plugins (examples/hangcap-node,
# examples/haltpoll-node) need to
# build: node (>= 18) and npm, Debian's nodejs and npm packages when they are
# missing. Its npm packages (@grpc/grpc-js, @grpc/proto-loader, typescript)
# come from the npm registry, pinned by each example's package-lock.json,
# when scripts/build-node-plugin.sh runs `npm ci`. Needs root or sudo to
# install; fails naming the packages otherwise.
set -euo pipefail
ok() {
	command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1 &&
		[ "$(node -p 'process.versions.node.split(".")[0]')" -ge 18 ]
}
ok && exit 0
pkgs="nodejs npm"
sudo=""
if [ "$(id -u)" != 0 ]; then
	if ! command -v sudo >/dev/null 2>&1; then
		echo "install-node-plugin-deps: need root or sudo to install the Debian packages: $pkgs (node >= 18)" >&2
		exit 1
	fi
	sudo="sudo"
fi
if ! command -v apt-get >/dev/null 2>&1; then
	echo "install-node-plugin-deps: no apt-get: install node >= 18 and npm by hand" >&2
	exit 1
fi
echo "==> installing $pkgs (Debian packages) for the TypeScript example plugin"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get install -y -q --no-install-recommends $pkgs ||
	{ $sudo apt-get update -q && $sudo apt-get install -y -q --no-install-recommends $pkgs; }
ok || { echo "install-node-plugin-deps: still no node >= 18 with npm: install them by hand" >&2; exit 1; }
