#!/usr/bin/env bash
# Re-records the real-kernel agreement suite (docs/capture.md): one capture
# bundle per workload under validation/captures/ (OUT=DIR elsewhere), each a
# few seconds so that the whole suite stays a few MB. Needs root, tracefs,
# cyclictest and stress-ng (installed by scripts/install-capture-deps.sh) and
# bin/tickemu (TICKEMU=PATH for another binary). Record on a quiet machine:
# every bundle's note says what else was running (the load average).
#
#   make capture                       # all of them
#   bash scripts/capture-suite.sh cyclictest-t1-i1000 timer1   # some
set -euo pipefail
cd "$(dirname "$0")/.."
TICKEMU=${TICKEMU:-bin/tickemu}
OUT=${OUT:-validation/captures}
if [ "$(id -u)" != 0 ]; then
	echo "capture-suite: the captures need root (kernel-wide trace events): run it as root (sudo make capture)" >&2
	exit 2
fi
bash scripts/install-capture-deps.sh
[ -x "$TICKEMU" ] || { echo "capture-suite: no $TICKEMU: run make build first" >&2; exit 2; }
mkdir -p "$OUT"
N=$(nproc)

# The suite: name, then the command. The timer_migration runs set the
# sysctl first (migration0/1 below).
suite=(
	"cyclictest-t1-i1000|cyclictest -t1 -i 1000 -l 3000 -m -q"
	"cyclictest-t1-i250|cyclictest -t1 -i 250 -l 6000 -m -q"
	"cyclictest-tN-i1000|cyclictest -t -a -i 1000 -l 3000 -m -q"
	"cyclictest-tN-i250|cyclictest -t -a -i 250 -l 6000 -m -q"
	"stress-timer1|stress-ng --timer 1 -t 2s --metrics-brief"
	"stress-timerN|stress-ng --timer $N -t 2s --metrics-brief"
	"stress-hrtimers1|stress-ng --hrtimers 1 -t 2s --metrics-brief"
	"stress-nanosleep1|stress-ng --nanosleep 1 -t 2s --metrics-brief"
	"stress-timer1-migration0|stress-ng --timer 1 -t 2s --metrics-brief"
	"stress-timer1-migration1|stress-ng --timer 1 -t 2s --metrics-brief"
)

sysctl=/proc/sys/kernel/timer_migration
oldmig=""
if [ -e "$sysctl" ]; then
	oldmig=$(cat "$sysctl")
fi
restore() {
	if [ -n "$oldmig" ]; then
		echo "$oldmig" >"$sysctl"
	fi
}
trap restore EXIT
trap 'restore; exit 130' INT
trap 'restore; exit 143' TERM

want=("$@")
selected() {
	[ ${#want[@]} -eq 0 ] && return 0
	local w
	for w in "${want[@]}"; do
		[ "$w" = "$1" ] && return 0
	done
	return 1
}

machine="$(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //') ($N CPUs)"
for entry in "${suite[@]}"; do
	name=${entry%%|*}
	cmd=${entry#*|}
	selected "$name" || continue
	case $name in
	*-migration0 | *-migration1)
		if [ -z "$oldmig" ]; then
			echo "capture-suite: $name: this kernel has no $sysctl; skipped" >&2
			continue
		fi
		echo "${name##*-migration}" >"$sysctl"
		;;
	*)
		[ -n "$oldmig" ] && echo "$oldmig" >"$sysctl"
		;;
	esac
	note="agreement suite (scripts/capture-suite.sh): $name on $(hostname), $machine, Linux $(uname -r); load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
	if [ -e "$sysctl" ]; then
		note="$note; kernel.timer_migration=$(cat "$sysctl")"
	fi
	echo "==> $name: $cmd"
	# shellcheck disable=SC2086 # cmd is a word list on purpose
	"$TICKEMU" capture --name "$name" --note "$note" --out "$OUT/$name.tcap" -- $cmd >"$OUT/.$name.log" 2>&1 || {
		cat "$OUT/.$name.log" >&2
		echo "capture-suite: $name failed" >&2
		exit 1
	}
	tail -n 20 "$OUT/.$name.log" | sed -n '/^capture /,$p'
	rm -f "$OUT/.$name.log"
done
restore
trap - EXIT INT TERM
echo "==> sizes"
ls -l "$OUT"/*.tcap
du -ch "$OUT"/*.tcap | tail -1
