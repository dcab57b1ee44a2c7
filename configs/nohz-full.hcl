# nohz_full CPUs running one busy task each, with the housekeeping CPU 0 idle.
#
# Isolated CPUs 1-2 run a CPU-bound task and a 1 ms kernel timer; CPU 3 runs
# the busy task alone. Jiffies must keep advancing although every CPU that
# could stop its tick does: can_stop_idle_tick() (kernel/time/tick-sched.c,
# since 3.10) keeps the tick of the CPU holding the do_timer duty alive while
# nohz_full CPUs exist, so idle CPU 0 ticks at HZ and the isolated CPUs' 1 ms
# timers expire on time.
#
# The era decides what is left of the tick on a busy nohz_full CPU:
#   v4_9   scheduler_tick_max_deferment() caps the stopped tick at 1 s: the
#          residual 1 Hz tick on every nohz_full CPU (CPU 3 ticks once a second).
#   v4_17  d84b31313ef8 (v4.17) removed the cap; sched_tick_remote() runs the
#          scheduler tick of each busy nohz_full CPU once a second from a
#          housekeeping CPU instead (CPU 3 does not tick at all).
#
#   tickemu run configs/nohz-full.hcl --variant v4_17
#   tickemu compare configs/nohz-full.hcl --variants v4_9,v4_17
#   tickemu bisect configs/nohz-full.hcl --good 4.17 --bad 4.16 --metric Kernel.hrtimer-interrupts

# null leaves nohz_full_tick to the kernel version (offload without one).
variable "nohz_full_tick" {
  default     = null
  description = "max_deferment (before 4.17: residual 1 Hz tick) or offload (4.17+: sched_tick_remote on a housekeeping CPU); null: the kernel version's"
}

machine {
  cpus      = 4
  hz        = 1000
  nohz      = "full"
  nohz_full = "1-3"
  highres   = true
}

kernel {
  nohz_full_tick = var.nohz_full_tick
}

workload "stress_ng_cpu" "busy" {
  instances = 3
  cpus      = "1-3"
}

workload "kernel_timers" "poll_1ms" {
  cpus   = "1-2"
  period = "1ms"
}

run {
  duration = "3s"
  seed     = 1
}

variant "v4_9" {
  vars = { nohz_full_tick = "max_deferment" }
}
variant "v4_17" {
  vars = { nohz_full_tick = "offload" }
}
