# NO_HZ idle jiffies catch-up on a 3.10-era timer wheel.
#
# Report (40-core CentOS 7, kernel 3.10): cyclictest -a 10-13 -t 4 -p 99 on
# isolated, nearly idle cores showed Max 1089 and 1485 us on some threads while
# Min/Avg stayed 2-3 us. With the tick stopped, an isolated CPU's timer base
# lagged ~300000 jiffies behind jiffies, and __run_timers() caught up one jiffy
# at a time (run_timer_softirq took 130-566 us) when a timer finally came due.
#
# Here the isolated CPUs carry the timers a 3.10 x86 CPU has: the machine-check
# poll (mce_timer_fn, every 5 minutes, not deferrable) and deferrable vmstat
# work. Their only other wakeups are cyclictest's, which never let the tick
# fire, so the wheel runs only when the MCE poll comes due, after ~300000
# jiffies. cyclictest is started at 295 s of uptime and measured for 10 s,
# which covers the first MCE poll on every isolated CPU.
#
#   tickemu run configs/nohz-catchup.hcl --variant per_jiffy
#   tickemu compare configs/nohz-catchup.hcl --variants per_jiffy,next_expiry
#   tickemu bisect configs/nohz-catchup.hcl --good 4.8 --bad 3.10 --metric Cyclictest/thread=0.max-latency-ns
#
# A custom build's local device takes the LAPIC's place with
# --var local_clockevent=NAME (make bench times the example plugin so, linked
# in and with --var local_isolation=process).

# null leaves the catch-up to the kernel version (next_expiry without one);
# the variants name each strategy.
variable "catchup" {
  default     = null
  description = "__run_timers catch-up: per_jiffy (3.10), skip_empty (3.15), next_expiry (4.8+); null: the kernel version's"
}

variable "local_clockevent" {
  default     = "lapic"
  description = "plugin of the local clock event device; a custom build's own (tickemu build --with) for A/B runs"
}

variable "local_isolation" {
  default     = ""
  description = "isolation of the local device: inprocess, process, or empty for the loader's default"
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

# The catch-up loop's cost per empty jiffy is calibrated to the report's Max
# (1089/1485 us for a ~300000-jiffy gap: ~3.6 ns per jiffy with IRQs off); its
# run_timer_softirq durations of 130-566 us were for smaller gaps. The plugin's
# default (1.7 ns) assumes the 566 us covered the whole gap.
wheel {
  layout            = "cascade"
  catchup           = var.catchup
  iteration_cost_ns = 3.6
}

clockevent "local" {
  plugin    = var.local_clockevent
  isolation = var.local_isolation == "" ? null : var.local_isolation
  lapic {
    mode = "tsc_deadline"
  }
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
  vars = { catchup = "per_jiffy" }
}
variant "skip_empty" {
  vars = { catchup = "skip_empty" }
}
variant "next_expiry" {
  vars = { catchup = "next_expiry" }
}
