#!/usr/bin/env bash
# Installs what `make test` needs beyond Go: headless Chromium (Debian
# package `chromium`), which cmd/tickemu's report test opens the HTML report
# in. Does nothing when it is already installed. Needs root (CI runs as
# root on a fresh machine) or sudo.
set -euo pipefail
for b in chromium chromium-browser; do
	if command -v "$b" >/dev/null 2>&1; then
		exit 0
	fi
done
sudo=""
if [ "$(id -u)" != 0 ]; then
	sudo="sudo"
fi
echo "==> installing chromium (Debian package) for the HTML report test"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -q
$sudo apt-get install -y -q --no-install-recommends chromium
