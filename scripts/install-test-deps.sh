#!/usr/bin/env bash
# Installs what `make test` needs beyond Go, from Debian packages: headless
# Chromium (`chromium`), which cmd/tickemu's report test opens the HTML
# report in and framework/report's browser tests drive with a pointer
# through the DevTools protocol (chromedp talks to chromium itself: no
# chromedriver); trace-cmd, which the trace.dat test reads tickemu's trace.dat
# with; and, for `make test-kernelshark`, KernelShark under a virtual X
# server (kernelshark, xvfb, xauth, and x11-apps for xwd, the screenshot).
# Installs only what is missing. Needs root (CI runs as root on a fresh
# machine) or sudo.
set -euo pipefail
missing=()
if ! command -v chromium >/dev/null 2>&1 && ! command -v chromium-browser >/dev/null 2>&1; then
	missing+=(chromium)
fi
for pair in trace-cmd:trace-cmd kernelshark:kernelshark xvfb-run:xvfb xauth:xauth xwd:x11-apps; do
	if ! command -v "${pair%%:*}" >/dev/null 2>&1; then
		missing+=("${pair#*:}")
	fi
done
if [ ${#missing[@]} -eq 0 ]; then
	exit 0
fi
sudo=""
if [ "$(id -u)" != 0 ]; then
	sudo="sudo"
fi
echo "==> installing ${missing[*]} (Debian packages) for the tests"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -q
$sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
