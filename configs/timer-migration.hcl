# Timer placement and migration (issue 13): tasks on nohz_full CPUs using
# POSIX timers (stress-ng --timer) and nanosleep (cyclictest), plus the
# migratable background timer_list timers of an otherwise idle machine,
# under the three timer placement regimes of Linux:
#
#   push  before 6.9: a timer that is not pinned, started on an idle or
#         nohz_full CPU, is queued on a busy housekeeping CPU
#         (get_nohz_timer_target(), kernel/sched/core.c), wheel and hrtimer.
#   pull  6.9+ (7ee988770326 "timers: Implement the hierarchical pull
#         model"): the wheel queues every timer locally and an idle CPU
#         hands its global timers to the timer-migration hierarchy, whose
#         migrator expires them; hrtimers still push.
#   off   6.9+ with /proc/sys/kernel/timer_migration = 0: hrtimers stay on
#         the CPU that starts them; the hierarchy still pulls timer_list
#         timers (since 6.9 the sysctl only gates hrtimer placement).
#   push_off  before 6.9 with timer_migration = 0: nothing moves.
#
# CPU 0 is the housekeeping CPU (timekeeping, nohz_full= everything else);
# the stress-ng instances and the cyclictest threads run on nohz_full CPUs.
# docs/reference/migration.md has the kernel rules the model follows.
#
#   tickemu compare configs/timer-migration.hcl --seeds 3
#   tickemu compare configs/timer-migration.hcl --seeds 3 --var cpus=64 --var 'nohz_full="1-63"' \
#     --var 'timer_cpus="1-31"' --var 'sleeper_cpus="32-63"' --var instances=31 --var threads=32
#
# (--var values are HCL expressions: a CPU list needs its quotes.)
#
# What it shows (seed 1; tickemu run --format json for the counters): the
# stress-ng bogo ops/s are the same in all three (one op per 1 ms expiry:
# where the expiry runs does not change how many there are); with push and
# pull the nohz_full CPUs' hrtimers are queued on CPU 0, which takes nearly
# every timer interrupt, expires many timers per interrupt and wakes the
# tasks with reschedule IPIs: fewer interrupts in total, CPU 0 less idle, and
# the clock_nanosleep wakeups pay CPU 0's idle exit plus the IPI (Avg ~143 us
# against ~83 us with off on 8 CPUs). pull differs from push only in the
# wheel's timers: they stay local in BASE_GLOBAL and the hierarchy's
# migrator (CPU 0) expires the idle CPUs' ones (remote_expiries), with the
# sysctl on or off.
#   tickemu run configs/timer-migration.hcl --variant push
#   tickemu bisect configs/timer-migration.hcl --good 6.8 --bad 6.9 --metric Cyclictest/thread=0.avg-latency-ns
#
# (The bisection finds no change: 7ee988770326 moves only timer_list timers,
# and the sleepers' hrtimers are pushed in both releases.)

variable "cpus" {
  default     = 8
  description = "machine size: 8, or 64 with the 64-CPU masks below"
}

variable "nohz_full" {
  default     = "1-7"
  description = "nohz_full= CPUs (every CPU but the housekeeping CPU 0)"
}

variable "timer_cpus" {
  default     = "1-3"
  description = "CPUs of the stress-ng --timer instances (one each)"
}

variable "instances" {
  default = 3
}

variable "sleeper_cpus" {
  default     = "4-7"
  description = "CPUs of the cyclictest (clock_nanosleep) threads"
}

variable "threads" {
  default = 4
}

# null leaves the wheel's migration attribute unset: the kernel version
# decides (push without one, pull from 6.9).
variable "model" {
  default     = null
  description = "the wheel's placement model: push (before 6.9) or pull (6.9+); null: the kernel version's"
}

variable "migration" {
  default     = true
  description = "kernel.timer_migration"
}

variable "duration" {
  default = "500ms"
}

machine {
  cpus      = var.cpus
  hz        = 1000
  nohz      = "full"
  nohz_full = var.nohz_full
  highres   = true
  idle_state "C1" {
    exit_latency     = "1us"
    target_residency = "2us"
  }
  idle_state "C6" {
    exit_latency     = "85us"
    target_residency = "300us"
  }
}

wheel {
  plugin    = "wheel"
  migration = var.model
}

hrtimer {
  plugin = "hrtimer"
}

clockevent "local" {
  plugin = "lapic"
  mode   = "tsc_deadline"
}

governor {
  plugin = "menu"
}

# posix-signals.hcl's calibrated costs.
kernel {
  timer_migration      = var.migration
  syscall_cost         = "100ns"
  irq_entry_cost       = "100ns"
  irq_exit_cost        = "80ns"
  signal_generate_cost = "150ns"
  signal_deliver_cost  = "700ns"
  signal_dequeue_cost  = "100ns"
}

# stress-ng --timer N --timer-freq 1000 (a 1 ms POSIX timer per instance,
# current stress-ng: the handler does not re-arm). Each expiry is one bogo
# op; the main loop sleeps in nanosleep() in between.
workload "stress_ng_timer" "timer" {
  instances        = var.instances
  cpus             = var.timer_cpus
  freq             = "1kHz"
  rearm_in_handler = false
  handler_work     = "100ns"
}

# clock_nanosleep() sleepers, 2 ms and up (cyclictest -i 2000 -d 500).
workload "cyclictest" "sleepers" {
  threads     = var.threads
  cpus        = var.sleeper_cpus
  interval    = "2ms"
  distance    = "500us"
  priority    = 80
  dma_latency = false
}

# Migratable kernel timers on every CPU (writeback, neighbour tables, TCP
# keepalive...): 4 ms timer_list timers re-armed by their callbacks.
workload "kernel_timers" "background" {
  period        = "4ms"
  pinned        = false
  callback_cost = "1us"
  phase_jitter  = "4ms"
}

run {
  duration = var.duration
  seed     = 1
}

# Before 6.9: get_nohz_timer_target() for wheel timers and hrtimers.
variant "push" {
  vars = { model = "push", migration = true }
}

# 6.9+: the wheel's timers stay local and are pulled by the hierarchy's
# migrator; hrtimers are still pushed.
variant "pull" {
  vars = { model = "pull", migration = true }
}

# 6.9+ with kernel.timer_migration = 0: hrtimers stay local, the hierarchy
# still expires idle CPUs' timer_list timers.
variant "off" {
  vars = { model = "pull", migration = false }
}

# Before 6.9 with kernel.timer_migration = 0: every timer stays and expires
# on the CPU that started it.
variant "push_off" {
  vars = { model = "push", migration = false }
}
