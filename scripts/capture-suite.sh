#!/usr/bin/env bash
# Re-records the real-kernel agreement suite (docs/capture.md): one capture
# bundle per workload under validation/captures/ (OUT=DIR elsewhere), each a
# few seconds so that the whole suite stays a few MB. Needs root, tracefs,
# cyclictest and stress-ng (installed by scripts/install-capture-deps.sh) and
# bin/tickemu (TICKEMU=PATH for another binary). Record on a quiet machine:
# every bundle's note says what else was running (the load average, and
# CAPTURE_NOTE, added to every note). The script freezes nothing itself: the
# trace is kernel-wide, so other processes' work fills it and the CPU
# (validation/captures/README.md); stop or freeze them first and say so in
# CAPTURE_NOTE.
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
# Each run is short (a second at most) so that the whole suite, recaptures
# included, stays a few MB: cyclictest by its loop count, stress-ng by a
# bogo-op limit (-ops), whose run the model replays for the same wall time.
suite=(
	"cyclictest-t1-i1000|cyclictest -t1 -i 1000 -l 1000 -m -q"
	"cyclictest-t1-i250|cyclictest -t1 -i 250 -l 2000 -m -q"
	"cyclictest-tN-i1000|cyclictest -t -a -i 1000 -l 1000 -m -q"
	"cyclictest-tN-i250|cyclictest -t -a -i 250 -l 2000 -m -q"
	"stress-timer1|stress-ng --timer 1 --timer-ops 4000 --metrics-brief"
	"stress-timerN|stress-ng --timer $N --timer-ops 2000 --metrics-brief"
	"stress-hrtimers1|stress-ng --hrtimers 1 --hrtimers-ops 5000 --metrics-brief"
	"stress-nanosleep1|stress-ng --nanosleep 1 --nanosleep-ops 250 --metrics-brief"
	"stress-timer1-migration0|stress-ng --timer 1 --timer-ops 4000 --metrics-brief"
	"stress-timer1-migration1|stress-ng --timer 1 --timer-ops 4000 --metrics-brief"
)
# REPEAT=2 (the default) records every workload twice, NAME.tcap and its
# recapture NAME.2.tcap: docs/validation.md's noise column compares them.
REPEAT=${REPEAT:-2}

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
for round in $(seq 1 "$REPEAT"); do
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
	file=$name
	[ "$round" = 1 ] || file=$name.$round
	note="agreement suite (scripts/capture-suite.sh): $name (recording $round of $REPEAT) on $(hostname), $machine, Linux $(uname -r); load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
	if [ -e "$sysctl" ]; then
		note="$note; kernel.timer_migration=$(cat "$sysctl")"
	fi
	# CAPTURE_NOTE adds what the recorder knows of the machine's state.
	note="$note${CAPTURE_NOTE:+; $CAPTURE_NOTE}"
	echo "==> $file: $cmd"
	# shellcheck disable=SC2086 # cmd is a word list on purpose
	"$TICKEMU" capture --name "$name" --note "$note" --out "$OUT/$file.tcap" -- $cmd >"$OUT/.$file.log" 2>&1 || {
		cat "$OUT/.$file.log" >&2
		echo "capture-suite: $name failed" >&2
		exit 1
	}
	grep -E '^(capture|bundle|host|missing events|tickemu: capture: warning)' "$OUT/.$file.log" || true
	rm -f "$OUT/.$file.log"
done
done
restore
trap - EXIT INT TERM
echo "==> sizes"
ls -l "$OUT"/*.tcap
du -ch "$OUT"/*.tcap | tail -1
