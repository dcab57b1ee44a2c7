# Machine profile fitted by tickemu calibrate (tickemu 0.1.0-dev) from 5 capture bundle(s):
#   kvm-cyclictest-l2000.tcap: cyclictest -t2 -a -i 1000 -l 2000 -m -q, captured 2026-12-07 04:59:40 UTC (cyclictest -t2 -a -i 1000 -l 2000 -m -q on 6.18.44-fc-v1272 x86_64, 2 CPUs; recorded with scripts/calibrate-profile.sh)
#   kvm-cyclictest-t1-i500.tcap: cyclictest -t1 -a -i 500 -l 2000 -m -q, captured 2026-12-07 04:59:42 UTC (cyclictest -t1 -a -i 500 -l 2000 -m -q on 6.18.44-fc-v1272 x86_64, 2 CPUs; recorded with scripts/calibrate-profile.sh)
#   kvm-cyclictest.tcap: cyclictest -t2 -a -i 1000 -l 300 -m -q, captured 2026-12-07 04:59:36 UTC (cyclictest -t2 -a -i 1000 -l 300 -m -q on 6.18.44-fc-v1272 x86_64, 2 CPUs; recorded with scripts/calibrate-profile.sh)
#   kvm-stress-ng-nanosleep.tcap: stress-ng --nanosleep 1 -t 1, captured 2026-12-07 04:59:57 UTC (stress-ng --nanosleep 1 -t 1 on 6.18.44-fc-v1272 x86_64, 2 CPUs; recorded with scripts/calibrate-profile.sh)
#   kvm-stress-ng-timer.tcap: stress-ng --timer 1 -t 1, captured 2026-12-07 04:59:47 UTC (stress-ng --timer 1 -t 1 on 6.18.44-fc-v1272 x86_64, 2 CPUs; recorded with scripts/calibrate-profile.sh)
# host: Linux 6.18.44-fc-v1272 x86_64, KVM guest, 2 CPUs, HZ 250, nohz idle, AMD EPYC
# Each value is the fit ± its standard error and the estimators it comes from
# (docs/calibration-fit.md). Use it with: machine { profile = "THIS FILE" }.
# Not set here (the model's defaults stay):
#   kernel.syscall_cost: the entry and exit lie outside every traced pair (raw_syscalls:sys_enter/sys_exit bracket the body)
#   kernel.jiffies_update_cost: tick_do_update_jiffies64() has no tracepoint of its own
#   kernel.nohz_stop_cost: tick_stop marks the decision, not the end of the bookkeeping
#   kernel.nohz_restart_cost: no tracepoint at the tick's restart
#   kernel.signal_dequeue_cost: dequeue_signal() is inside the signal_deliver interval, not apart
#   kernel.clock_read_cost: the vDSO clock read traps into nothing traced
#   kernel.timer_slack_cost: a task's setting, not a cost
#   kernel.tmigr_walk_cost: timer_migration events are not among the captured ones
#   kernel.tmigr_remote_cost: timer_migration events are not among the captured ones
#   lapic.oneshot_write_cost: the capture's device runs in TSC-deadline mode
#   lapic.eoi_cost: the EOI write (MSR 0x80b in x2APIC mode) is not separable from the interrupt's tail

kernel {
  irq_entry_cost       = "395ns" # ± 98ns: irq_entry - hrtimer.interrupt_entry_ns (kept at 100ns)
  irq_exit_cost        = "412ns" # ± 73ns: irq_exit
  softirq_entry_cost   = "1907ns" # ± 174ns: softirq_entry
  tick_cost            = "5298ns" # ± 174ns: tick
  wakeup_cost          = "2033ns" # ± 224ns: wakeup
  timer_callback_cost  = "2602ns" # ± 118ns: timer_callback
  context_switch_cost  = "1695ns" # ± 174ns: switch_busy - irq_exit
  signal_generate_cost = "367ns" # ± 40ns: signal_generate
  ipi_send_cost        = "8768ns" # ± 621ns: ipi_send
  ipi_latency_cost     = "20989ns" # ± 1.83us: ipi_latency
}

clockevent "local" {
  plugin              = "lapic"
  deadline_write_cost = "7892ns" # ± 620ns: start_program - start_plain
  irq_latency         = "15328ns" # ± 728ns: lateness_busy - irq_entry
}
