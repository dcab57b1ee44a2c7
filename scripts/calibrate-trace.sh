#!/bin/bash
# Records a tracefs trace of one command with the events tickemu calibrate's
# estimators read (docs/calibration-fit.md), in a tracefs instance of its own
# so other tracing on the machine is left alone; the instance is removed
# afterwards, also on Ctrl-C. Needs root and tracefs.
#
#   scripts/calibrate-trace.sh OUT.trace -- COMMAND...
#
# The trace goes to OUT.trace, the command's output to OUT.trace.stdout.
set -euo pipefail
[ $# -ge 3 ] && [ "$2" = "--" ] || { echo "usage: $0 OUT.trace -- COMMAND..." >&2; exit 2; }
out=$1; shift 2
tr=/sys/kernel/tracing
[ -d $tr/instances ] || mount -t tracefs nodev $tr
T=$tr/instances/tickemu-calibrate-$$
mkdir $T
trap 'echo 0 > $T/tracing_on; rmdir $T' EXIT
echo 16384 > $T/buffer_size_kb
for e in timer irq irq_vectors/local_timer_entry irq_vectors/local_timer_exit \
  sched/sched_switch sched/sched_waking sched/sched_wakeup power/cpu_idle \
  signal/signal_generate signal/signal_deliver msr/write_msr ipi/ipi_send_cpu \
  irq_vectors/reschedule_entry irq_vectors/reschedule_exit \
  irq_vectors/call_function_single_entry irq_vectors/call_function_single_exit; do
  if [ -d $T/events/$e ]; then echo 1 > $T/events/$e/enable; else echo "$0: no event $e on this kernel" >&2; fi
done
echo 1 > $T/tracing_on
"$@" > "$out.stdout" 2>&1 || echo "$0: the command exited with $?" >&2
echo 0 > $T/tracing_on
cat $T/trace > "$out"
grep -h -E 'overrun|dropped' $T/per_cpu/cpu*/stats | awk '$NF != 0 {print "'"$0"': lost events: " $0 > "/dev/stderr"}'
