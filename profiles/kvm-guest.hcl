# Machine profile fitted by tickemu calibrate (tickemu 0.1.0-dev) from 6 capture bundle(s):
#   kvm-cyclictest.tcap: cyclictest -t2 -a -i 1000 -l 300 -m -q, captured 2026-12-07 04:21:19 UTC (cyclictest on the 6.18 Firecracker KVM guest (2 vCPUs) the calibrate tests were written on, with other tickemu builds running beside it; recorded with scripts/calibrate-trace.sh)
#   kvm-cyclictest-l2000.tcap: cyclictest -t2 -a -i 1000 -l 2000 -m -q, captured 2026-12-07 04:11:26 UTC (cyclictest, busy machine)
#   kvm-cyclictest-t1-i500.tcap: cyclictest -t1 -a -i 500 -l 2000 -m -q, captured 2026-12-07 04:36:58 UTC (cyclictest, one thread on the 6.18 Firecracker KVM guest (2 vCPUs) with other tickemu builds running beside it; recorded with scripts/calibrate-trace.sh)
#   kvm-cyclictest-nomsr.tcap: cyclictest -t2 -a -i 1000 -l 1000 -m -q, captured 2026-12-07 04:05:00 UTC (cyclictest on the same guest, recorded without the msr and signal events)
#   kvm-stress-ng-timer.tcap: stress-ng --timer 1 -t 1, captured 2026-12-07 04:19:49 UTC (stress-ng timer, busy machine)
#   kvm-stress-ng-nanosleep.tcap: stress-ng --nanosleep 1 -t 1, captured 2026-12-07 04:36:56 UTC (stress-ng --nanosleep on the 6.18 Firecracker KVM guest (2 vCPUs) with other tickemu builds running beside it; recorded with scripts/calibrate-trace.sh)
# host: Linux 6.18.44-fc-v1272 x86_64, KVM guest, 2 CPUs, HZ 250, nohz idle, AMD EPYC
# Each value is the fit ± its standard error and the estimators it comes from
# (docs/calibration-fit.md). Use it with: machine { profile = "THIS FILE" }.
# Not set here (the model's defaults stay):
#   kernel.syscall_cost: no traced pair brackets a syscall's entry and exit alone (raw_syscalls:sys_enter/sys_exit would)
#   kernel.jiffies_update_cost: tick_do_update_jiffies64() has no tracepoint of its own
#   kernel.nohz_stop_cost: tick_stop marks the decision, not the end of the bookkeeping
#   kernel.nohz_restart_cost: no tracepoint at the tick's restart
#   kernel.ipi_send_cost: ipi events are not among the captured ones
#   kernel.ipi_latency_cost: ipi events are not among the captured ones
#   kernel.signal_dequeue_cost: dequeue_signal() is inside the signal_deliver interval, not apart
#   kernel.clock_read_cost: the vDSO clock read traps into nothing traced
#   kernel.timer_slack_cost: a task's setting, not a cost
#   kernel.tmigr_walk_cost: timer_migration events are not among the captured ones
#   kernel.tmigr_remote_cost: timer_migration events are not among the captured ones
#   lapic.oneshot_write_cost: the capture's device runs in TSC-deadline mode
#   lapic.eoi_cost: the EOI write (MSR 0x80b in x2APIC mode) is not separable from the interrupt's tail

kernel {
  irq_entry_cost       = "541ns" # ± 57ns: irq_entry - hrtimer.interrupt_entry_ns (kept at 100ns)
  irq_exit_cost        = "418ns" # ± 89ns: irq_exit
  softirq_entry_cost   = "1939ns" # ± 100ns: softirq_entry
  tick_cost            = "4879ns" # ± 630ns: tick
  wakeup_cost          = "1664ns" # ± 329ns: wakeup
  timer_callback_cost  = "2839ns" # ± 126ns: timer_callback
  context_switch_cost  = "1600ns" # ± 108ns: switch_busy - irq_exit
  signal_generate_cost = "410ns" # ± 6ns: signal_generate
}

clockevent "local" {
  plugin              = "lapic"
  deadline_write_cost = "8100ns" # ± 392ns: start_program - start_plain
  irq_latency         = "15538ns" # ± 619ns: lateness_busy - irq_entry
}
