#!/bin/sh
# migration-capture.sh OUTDIR: where this kernel starts and expires the
# hrtimers of stress-ng --timer and --nanosleep with kernel.timer_migration
# 1 and 0 (docs/reference/migration.md P6). Needs root, tracefs and
# stress-ng. For each setting and workload it writes OUTDIR/TM-WORKLOAD.trace
# (the events hrtimer_start, hrtimer_expire_entry, hrtimer_cancel and
# sched_switch from a private tracefs instance) and OUTDIR/TM-WORKLOAD.out
# (stress-ng's --metrics-brief). The sysctl is set back to what it was on
# every exit, also on Ctrl-C. ORDER="0 1" runs timer_migration 0 first
# (the default runs 1 first); SECS sets the seconds per run (3).
set -eu
out=${1:?usage: migration-capture.sh OUTDIR}
secs=${SECS:-3}
mkdir -p "$out"
T=/sys/kernel/tracing
[ -e "$T/trace" ] || mount -t tracefs nodev "$T"
I=$T/instances/migration-capture.$$
old=$(cat /proc/sys/kernel/timer_migration)
cleanup() {
	echo "$old" > /proc/sys/kernel/timer_migration
	[ -d "$I" ] && { echo 0 > "$I/tracing_on"; rmdir "$I"; }
}
trap cleanup EXIT
trap 'exit 130' INT TERM
mkdir "$I"
echo 8192 > "$I/buffer_size_kb"
for e in timer/hrtimer_start timer/hrtimer_expire_entry timer/hrtimer_cancel sched/sched_switch; do
	echo 1 > "$I/events/$e/enable"
done
for tm in ${ORDER:-1 0}; do
	for w in timer nanosleep; do
		echo "$tm" > /proc/sys/kernel/timer_migration
		echo > "$I/trace"
		echo 1 > "$I/tracing_on"
		stress-ng --"$w" 1 -t "$secs" --metrics-brief > "$out/tm$tm-$w.out" 2>&1 || true
		echo 0 > "$I/tracing_on"
		echo "$old" > /proc/sys/kernel/timer_migration
		cat "$I/trace" > "$out/tm$tm-$w.trace"
	done
done
# Summary: per run, stress-ng's bogo ops/s and, per callback of the
# hrtimers stress-ng processes started, the expiries and how many ran on
# another CPU than the one whose buffer holds the start.
for f in "$out"/tm*.trace; do
	run=$(basename "$f" .trace)
	ops=$(awk '/\] (timer|nanosleep) +[0-9]+ +[0-9.]+ /{print $9}' "$out/$run.out")
	echo "$run bogo-ops/s ${ops:-?}"
	awk '
	$5 == "hrtimer_start:" && $1 ~ /^stress-ng/ {
		split($6, p, "="); split($7, fn, "="); cpu[p[2]] = $2; func_[p[2]] = fn[2]
	}
	$5 == "hrtimer_expire_entry:" {
		split($6, p, "=")
		if (p[2] in cpu) {
			n[func_[p[2]]]++
			if (cpu[p[2]] != $2) moved[func_[p[2]]]++
			delete cpu[p[2]]
		}
	}
	END { for (k in n) printf "  %-20s expiries %8d on another CPU %6d\n", k, n[k], moved[k] + 0 }' "$f"
done
