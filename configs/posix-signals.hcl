# The 6.13 POSIX timer "regression" (LKML, Aug 2025: "[REGRESSION] 76%
# performance loss in timer workloads caused by 513793bc6ab3"): stress-ng
# --timer 1, whose SIGRTMIN handler re-arms its 1 MHz timer with
# timer_settime() (stress-ng <= V0.19.03), lost ~72-76% of its bogo ops/s
# from 6.12 to 6.13 (489,125 -> 134,950 on the reporter's machine).
#
# Thomas Gleixner showed it is the intended behaviour of 513793bc6ab3: the
# signal queued by the arming that the handler replaces used to be delivered
# anyway, so the handler ran again right after rt_sigreturn and the task never
# slept; since 6.13 that stale signal is dropped at dequeue, the task goes
# back to nanosleep() and is woken by the next expiry. His 2-second traces:
#   6.10:      posix_timer_fn 246739 starts = expiries, hrtimer_wakeup 2
#   6.17-rc1:  posix_timer_fn 304673 starts = expiries,
#              hrtimer_wakeup 152241 starts, 1 expiry
#
#   tickemu run configs/posix-signals.hcl --variant legacy --trace legacy.txt
#   grep -c 'hrtimer_start.*function=posix_timer_fn' legacy.txt
#   grep -c 'hrtimer_expire_entry.*function=posix_timer_fn' legacy.txt
#   grep -c 'hrtimer_start.*function=hrtimer_wakeup' legacy.txt
#   grep -c 'hrtimer_expire_entry.*function=hrtimer_wakeup' legacy.txt
#   tickemu run configs/posix-signals.hcl --variant consistent --format bench
#   tickemu bisect configs/posix-signals.hcl --good 6.12 --bad 6.13 --metric bogo-ops/s
#
# The trace of the full 2 s is large: ~0.9 GB with every event, ~300 MB with
# --trace-events hrtimer_start,hrtimer_expire_entry; shorten the run with
# --var duration=200ms for a quick look. docs/trace.md explains the numbers.

# Without a variant the kernel version decides (null leaves
# posix_timer_signals unset): consistent by default, legacy at 6.12 or older.
variable "signals" {
  default     = null
  description = "legacy (<= 6.12) or consistent (6.13+); null: the kernel version's (consistent without one)"
}

variable "duration" {
  default = "2s"
}

# One instance on one CPU of an x86 server: HZ=1000, NO_HZ idle, high-res
# timers, TSC-deadline LAPIC timer. With a 1 us timer the idle governor never
# predicts a sleep long enough for more than polling.
variable "governor" {
  default     = "menu"
  description = "cpuidle governor: menu, teo, or always_stop (3.10: every idle entry stops the tick)"
}

machine {
  cpus    = 1
  hz      = 1000
  nohz    = "idle"
  highres = true
  idle_state "C1" {
    exit_latency     = "1us"
    target_residency = "2us"
  }
}

wheel {
  plugin = "wheel"
}

hrtimer {
  plugin = "hrtimer"
}

clockevent "local" {
  plugin = "lapic"
  mode   = "tsc_deadline"
}

# Costs calibrated so that the legacy variant runs near the report's 6.12
# rate (489k bogo ops/s, ~2 us per handler cycle including one timer
# interrupt); everything else keeps the defaults (framework/kernel/costs.go).
kernel {
  posix_timer_signals = var.signals
  syscall_cost         = "100ns"
  irq_entry_cost       = "100ns"
  irq_exit_cost        = "80ns"
  signal_generate_cost = "150ns"
  signal_deliver_cost  = "700ns"
  signal_dequeue_cost  = "100ns"
}

governor {
  plugin = var.governor
}

workload "stress_ng_timer" "timer" {
  instances        = 1
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

# The 6.13+ era under each cpuidle governor. With a 1 us timer menu and teo
# keep the tick (the predicted idle is under a tick, state 0 polls), the
# 3.10-era always_stop stops and restarts it on every idle entry:
#   tickemu compare configs/posix-signals.hcl --variants menu,teo,always_stop
variant "menu" {
  vars = { signals = "consistent", governor = "menu" }
}
variant "teo" {
  vars = { signals = "consistent", governor = "teo" }
}
variant "always_stop" {
  vars = { signals = "consistent", governor = "always_stop" }
}
