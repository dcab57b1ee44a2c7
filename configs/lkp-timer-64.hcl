# stress-ng --timer on a 64-CPU server, as the LKP test robot runs it
# (nr_threads=100%: one instance per CPU, each pinned to its own CPU), with
# the POSIX timer signal delivery before and after 513793bc6ab3 (6.13).
#
# This is configs/posix-signals.hcl (one instance, the LKML report) on the
# robot's machine size: every CPU runs one stress-ng-timer process whose
# SIGRTMIN handler re-arms its 1 MHz timer with timer_settime() (stress-ng
# <= V0.19.03). Legacy delivery runs each handler back to back on the stale
# signal the re-arming queued; the consistent delivery drops it, so each
# instance sleeps in nanosleep() until its next expiry. The costs are
# posix-signals.hcl's, calibrated there on the single-instance report.
#
#   tickemu compare configs/lkp-timer-64.hcl --seeds 5 --var duration=20ms
#   tickemu run configs/lkp-timer-64.hcl --variant legacy --var duration=20ms
#   tickemu bisect configs/lkp-timer-64.hcl --good 6.12 --bad 6.13 --metric bogo-ops/s --var duration=20ms
#
# LKP measures 60 s (testtime); 64 CPUs at 1 MHz each make ~10^8 events per
# simulated second, so shorten the run with --var duration for a first look.

# null leaves posix_timer_signals to the kernel version (consistent without one).
variable "signals" {
  default     = null
  description = "POSIX timer signal delivery: legacy (<= 6.12) or consistent (6.13+); null: the kernel version's"
}

variable "duration" {
  default     = "60s"
  description = "measured span (LKP's testtime is 60 s; tests run 2 ms)"
}

machine {
  cpus    = 64
  hz      = 1000
  nohz    = "idle"
  highres = true
  idle_state "C1" {
    exit_latency     = "1us"
    target_residency = "2us"
  }
}

clockevent "local" {
  plugin = "lapic"
  mode   = "tsc_deadline"
}

governor {
  plugin = "menu"
}

kernel {
  posix_timer_signals  = var.signals
  syscall_cost         = "100ns"
  irq_entry_cost       = "100ns"
  irq_exit_cost        = "80ns"
  signal_generate_cost = "150ns"
  signal_deliver_cost  = "700ns"
  signal_dequeue_cost  = "100ns"
}

# One instance per CPU: instance i runs on CPU i (the cpus attribute left
# empty), as stress-ng's --timer 0 / LKP nr_threads=100% does.
workload "stress_ng_timer" "timer" {
  instances        = 64
  freq             = "1MHz"
  rearm_in_handler = true
  handler_work     = "100ns"
}

run {
  duration = var.duration
  seed     = 1
}

# Before 513793bc6ab3 (<= 6.12): stale timer signals are delivered.
variant "legacy" {
  vars = { signals = "legacy" }
}

# 6.13+: stale timer signals are dropped at dequeue.
variant "consistent" {
  vars = { signals = "consistent" }
}
