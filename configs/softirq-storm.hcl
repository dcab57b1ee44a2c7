# Stale softirq_expires_next after clock_settime: an hrtimer interrupt storm.
#
# Before 46eb1701c046 "hrtimer: Update softirq_expires_next correctly after
# __hrtimer_get_next_event()" (v5.12-rc3), retrigger_next_event() after
# clock_was_set() recomputed expires_next but left the cached
# softirq_expires_next alone. A soft CLOCK_REALTIME timer moved earlier by a
# forward jump then becomes the first event: the device fires for it, but the
# interrupt compares now with the stale cache, does not raise HRTIMER_SOFTIRQ,
# and reprograms the (past) soft expiry: an interrupt storm until
# CLOCK_MONOTONIC reaches the stale value (scenario 4 of docs/reference/hrtimer-clockevents.md).
#
#   tickemu run configs/softirq-storm.hcl --variant stale --format bench
#   tickemu run configs/softirq-storm.hcl --variant updated --format bench
#   tickemu bisect configs/softirq-storm.hcl --good 5.12 --bad 5.10 --metric Kernel.hrtimer-interrupts

# Without a variant the kernel version decides (null: the attribute is unset):
# updated by default, stale with --kernel-version 5.11 or older.
variable "softirq_next" {
  default     = null
  description = "stale (before 46eb1701c046) or updated; null: the kernel version's (updated without one)"
}

machine {
  cpus = 1
  hz   = 1000
  nohz = "idle"
}

# Both variants are v5.12-era kernels: clock_was_set() still ran
# retrigger_next_event() on every CPU, the one setting the clock included
# (on_each_cpu(), before 1e7f7fbcd40c in v5.15).
hrtimer {
  softirq_next      = var.softirq_next
  clock_was_set_ipi = "all"
}

# H: a hard CLOCK_MONOTONIC timer every 1 ms.
workload "hrtimer_load" "hard_1ms" {
  cpus   = "0"
  period = "1ms"
}

# S: a soft absolute CLOCK_REALTIME timer at wall time +10 ms.
workload "hrtimer_load" "soft_realtime" {
  cpus   = "0"
  period = "0s"
  first  = "10ms"
  clock  = "realtime"
  soft   = true
}

# At +0.5 ms CLOCK_REALTIME jumps forward by 7 ms: S is now due at +3 ms.
workload "clock_jump" "settime" {
  at    = "500us"
  delta = "7ms"
}

run {
  duration = "12ms"
  seed     = 1
}

variant "stale" {
  vars = { softirq_next = "stale" }
}
variant "updated" {
  vars = { softirq_next = "updated" }
}
