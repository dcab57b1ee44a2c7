#!/usr/bin/env bash
# Rebuilds framework/replay/testdata/captures/lttng-bug446190-3.10.txt, the
# real LTTng kernel capture the replay tests use, from the original CTF
# trace: the "bug446190" trace of the Trace Compass test traces (EPL-2.0)
# at a pinned commit, converted with Debian's babeltrace2 (2.0.4 in
# bookworm) and cut to the events the importer decodes (README.md next to
# the capture has the provenance).
#
#   scripts/lttng-capture.sh [OUT]     (default: the committed file)
#
# Needs git, network access to github.com and babeltrace2 (installed with
# apt-get when missing and running as root or with sudo). TRACES_REPO names
# another clone of the traces repository; CTF_TRACE a directory that already
# holds the bug446190 trace (then nothing is fetched). Not run by CI.
set -euo pipefail
repo=${TRACES_REPO:-https://github.com/eclipse-tracecompass/tracecompass-test-traces}
commit=3ddd1ebc1951abdd83dd3fd145876c89b6dd17e5
trace=ctf/src/main/resources/bug446190
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$root/framework/replay/testdata/captures/lttng-bug446190-3.10.txt}

if ! command -v babeltrace2 >/dev/null 2>&1; then
	sudo=""
	if [ "$(id -u)" != 0 ]; then
		sudo="sudo"
	fi
	export DEBIAN_FRONTEND=noninteractive
	$sudo apt-get update -q
	$sudo apt-get install -y -q --no-install-recommends babeltrace2
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
dir=${CTF_TRACE:-}
if [ -z "$dir" ]; then
	git -C "$tmp" init -q src
	git -C "$tmp/src" remote add origin "$repo"
	git -C "$tmp/src" fetch -q --depth 1 origin "$commit"
	git -C "$tmp/src" archive FETCH_HEAD "$trace" | tar -x -C "$tmp"
	dir=$tmp/$trace
fi

# The events framework/traceimport decodes (lttng-modules 2.5 names); the
# others (kmem_*, syscalls, statedump...) are left out to keep the file small.
events='hrtimer_(init|start|cancel|expire_entry|expire_exit)|timer_(init|start|cancel|expire_entry|expire_exit)|softirq_(raise|entry|exit)|irq_handler_(entry|exit)|sched_switch|sched_wakeup|power_cpu_idle'
# TZ=UTC: babeltrace2 prints the time of day in the local time zone.
TZ=UTC babeltrace2 "$dir" |
	grep -E '^\[[^]]*\] \([^)]*\) [^ ]+ ('"$events"'): ' >"$out"
echo "wrote $out ($(wc -l <"$out") events)"
