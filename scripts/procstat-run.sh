#!/bin/bash
# procstat-run.sh OUT -- COMMAND...: runs COMMAND and writes, into OUT, the
# per-CPU lines of /proc/stat before and after it and the CPU time its
# process tree was charged (GNU time: getrusage(RUSAGE_CHILDREN), the
# kernel's tick-sampled user and system split scaled to the runtime by
# cputime_adjust()). Needs GNU time (Debian package time). docs/config.md (CPU time accounting) compares these
# figures with tickemu's /proc/stat section for the same workload.
set -euo pipefail
out=$1
shift
[ "${1:-}" = "--" ] && shift
{
	echo "# command: $*"
	echo "# kernel: $(uname -r)"
	echo "# before"
	grep '^cpu' /proc/stat
	rus=$(mktemp)
	/usr/bin/time -o "$rus" -f "# rusage user %U s system %S s wall %e s" "$@" >/dev/null 2>&1 || echo "# exit status $?"
	echo "# after"
	grep '^cpu' /proc/stat
	cat "$rus"
	rm -f "$rus"
} >"$out"
