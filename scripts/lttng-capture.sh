#!/usr/bin/env bash
# Rebuilds the real LTTng kernel captures the replay tests use,
# framework/replay/testdata/captures/lttng-bug446190-3.10.txt and
# lttng-scp-vm-3.6.txt, from the original CTF traces: the "bug446190" and
# "synctraces/scp_src" traces of the Trace Compass test traces (EPL-2.0) at
# a pinned commit, converted with Debian's babeltrace2 (2.0.4 in bookworm)
# and, for scp_src, which babeltrace2 2.0 cannot read to its end, babeltrace
# 1.5.11; cut to the events the importer decodes (scp_src: its first 3 s).
# README.md next to the captures has the provenance.
#
#   scripts/lttng-capture.sh [OUTDIR]     (default: the committed files)
#
# Needs git, network access to github.com, babeltrace2 and babeltrace
# (installed with apt-get when missing and running as root or with sudo).
# TRACES_REPO names another clone of the traces repository; CTF_TRACES a
# directory that already holds ctf/src/main/resources/... of it (then
# nothing is fetched). Not run by CI.
set -euo pipefail
repo=${TRACES_REPO:-https://github.com/eclipse-tracecompass/tracecompass-test-traces}
commit=3ddd1ebc1951abdd83dd3fd145876c89b6dd17e5
res=ctf/src/main/resources
root=$(cd "$(dirname "$0")/.." && pwd)
outdir=${1:-$root/framework/replay/testdata/captures}

missing=""
command -v babeltrace2 >/dev/null 2>&1 || missing="$missing babeltrace2"
command -v babeltrace >/dev/null 2>&1 || missing="$missing babeltrace"
if [ -n "$missing" ]; then
	sudo=""
	if [ "$(id -u)" != 0 ]; then
		sudo="sudo"
	fi
	export DEBIAN_FRONTEND=noninteractive
	$sudo apt-get update -q
	# shellcheck disable=SC2086 # one word per package
	$sudo apt-get install -y -q --no-install-recommends $missing
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
base=${CTF_TRACES:-}
if [ -z "$base" ]; then
	git -C "$tmp" init -q src
	git -C "$tmp/src" remote add origin "$repo"
	git -C "$tmp/src" fetch -q --depth 1 origin "$commit"
	git -C "$tmp/src" archive FETCH_HEAD "$res/bug446190" "$res/synctraces/scp_src" | tar -x -C "$tmp"
	base=$tmp
fi

# The events framework/traceimport decodes (lttng-modules 2.1/2.5 names);
# the others (kmem_*, syscalls, statedump...) are left out to keep the
# files small.
events='hrtimer_(init|start|cancel|expire_entry|expire_exit)|timer_(init|start|cancel|expire_entry|expire_exit)|softirq_(raise|entry|exit)|irq_handler_(entry|exit)|sched_switch|sched_wakeup|power_cpu_idle'
keep() { grep -E '^\[[^]]*\] \([^)]*\) [^ ]+ ('"$events"'): '; }

# TZ=UTC: babeltrace prints the time of day in the local time zone.
out=$outdir/lttng-bug446190-3.10.txt
TZ=UTC babeltrace2 "$base/$res/bug446190" | keep >"$out"
echo "wrote $out ($(wc -l <"$out") events)"

# scp_src starts at 19:01:16.525090092: its first 3 s.
out=$outdir/lttng-scp-vm-3.6.txt
TZ=UTC babeltrace "$base/$res/synctraces/scp_src" | keep | awk '$1 < "[19:01:19.525090092]"' >"$out"
echo "wrote $out ($(wc -l <"$out") events)"
