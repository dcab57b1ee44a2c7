# The catch-up A/B of the Python catchup_policy example (bounded_walk):
# configs/nohz-catchup.hcl (a 3.10-era cascading wheel whose isolated CPUs
# sleep ~300000 jiffies between timers, while CPU 0 wakes every 500 ms) with
# the catch-up decided by a catchup_policy block: the builtin per_jiffy or
# next_expiry, or bounded_walk, which walks the 500-jiffy gaps and jumps the
# long ones (max_walk = 1000).
#
#   tickemu compare examples/catchup-python/ab.hcl --variants per_jiffy,bounded_walk --plugin-dir DIR

variable "policy" {
  default = "per_jiffy"
}

variable "duration" {
  default     = "10s"
  description = "measured span after the 295 s warmup (shorter runs for quick out-of-process comparisons)"
}

machine {
  cpus     = 40
  hz       = 1000
  nohz     = "idle"
  isolcpus = "10-13"
  highres  = true
}

catchup_policy {
  plugin = var.policy
}

# The catch-up loop's cost per empty jiffy is calibrated to the report's Max
# (1089/1485 us for a ~300000-jiffy gap: ~3.6 ns per jiffy with IRQs off); its
# run_timer_softirq durations of 130-566 us were for smaller gaps. The plugin's
# default (1.7 ns) assumes the 566 us covered the whole gap.
wheel {
  layout            = "cascade"
  iteration_cost_ns = 3.6
}

clockevent "local" {
  plugin = "lapic"
  mode   = "tsc_deadline"
}

# 3.10's idle loop stopped the tick on every idle entry (tick_nohz_idle_enter()
# before the governor ran). The machine has no idle states, so no governor is
# asked anyway; the choice documents the era.
governor {
  plugin = "always_stop"
}

workload "cyclictest" "isolated" {
  threads  = 4
  cpus     = "10-13"
  interval = "1000us"
  distance = "500us"
  priority = 99
  start    = "295s"
}

# arch/x86/kernel/cpu/mcheck/mce.c: mce_timer_fn every check_interval (5 min),
# per CPU, staggered here by 1.7 s per CPU so the polls fall in the window.
workload "kernel_timers" "mce_timer_fn" {
  cpus   = "10"
  period = "300s"
  phase_jitter = "1s"
}
workload "kernel_timers" "mce_timer_fn_11" {
  function = "mce_timer_fn"
  cpus     = "11"
  period   = "300s"
  phase_jitter = "1s"
  phase    = "1700ms"
}
workload "kernel_timers" "mce_timer_fn_12" {
  function = "mce_timer_fn"
  cpus     = "12"
  period   = "300s"
  phase_jitter = "1s"
  phase    = "3400ms"
}
workload "kernel_timers" "mce_timer_fn_13" {
  function = "mce_timer_fn"
  cpus     = "13"
  period   = "300s"
  phase_jitter = "1s"
  phase    = "5100ms"
}

workload "kernel_timers" "vmstat_update" {
  period     = "1s"
  deferrable = true
}

# A housekeeping CPU keeps a non-deferrable timer of its own.
workload "kernel_timers" "clocksource_watchdog" {
  cpus   = "0"
  period = "500ms"
}

run {
  warmup   = "295s"
  duration = var.duration
  seed     = 1
}

variant "per_jiffy" {
  vars = { policy = "per_jiffy" }
}
variant "next_expiry" {
  vars = { policy = "next_expiry" }
}
variant "bounded_walk" {
  vars = { policy = "bounded_walk" }
}
