#!/usr/bin/env bash
# Installs what `tickemu capture`'s tests and `make capture` run on the real
# kernel: cyclictest (Debian package rt-tests) and stress-ng. Does nothing
# when both are installed. Needs root (the captures do too) or sudo, and an
# apt-based system; elsewhere it fails naming what to install.
set -euo pipefail
missing=()
command -v cyclictest >/dev/null 2>&1 || missing+=(rt-tests)
command -v stress-ng >/dev/null 2>&1 || missing+=(stress-ng)
if [ ${#missing[@]} -eq 0 ]; then
	exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
	echo "install-capture-deps: no apt-get here: install ${missing[*]} (cyclictest from rt-tests, and stress-ng) with the system's package manager" >&2
	exit 1
fi
sudo=""
if [ "$(id -u)" != 0 ]; then
	if ! command -v sudo >/dev/null 2>&1; then
		echo "install-capture-deps: not root and no sudo: install ${missing[*]} as root (apt-get install -y ${missing[*]})" >&2
		exit 1
	fi
	sudo="sudo"
fi
echo "==> installing ${missing[*]} (Debian packages) for the capture tests"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -q
$sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
for b in cyclictest stress-ng; do
	command -v "$b" >/dev/null 2>&1 || { echo "install-capture-deps: $b is still not on PATH after installing ${missing[*]}" >&2; exit 1; }
done
