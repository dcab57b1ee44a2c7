# configs/default.hcl with the kernel's own timer wheel: the wheel block runs
# kwheel, kernel/time/timer.c built by `make kernel-oracle`, out of process
# (docs/kernel-oracle.md). Variants compare two builds of it: "mainline"
# (Debian's linux-source-6.12) and "patched" (a tree of your own):
#
#   make kwheel kernel-oracle ORACLE_HZ=1000 ORACLE_OUT=bin/oracle/hz1000
#   make kernel-oracle ORACLE_HZ=1000 KERNEL_SRC=/path/to/patched ORACLE_OUT=bin/oracle/patched
#   bin/tickemu compare oracle/scenarios/default-kwheel.hcl --variants mainline,patched \
#     --kernel-version 6.12 --plugin-dir bin/plugins
#
# Run from the repository's top directory: the library paths are relative
# to it. The machine is default.hcl's (HZ 1000: the builds need ORACLE_HZ=1000).

variable "library" {
  default     = "bin/oracle/hz1000/libktimer-oracle.so"
  description = "the kwheel library (libktimer-oracle.so) to run"
}

machine {
  cpus    = 4
  hz      = 1000
  nohz    = "idle"
  highres = true
  idle_state "C1" {
    exit_latency     = "2us"
    target_residency = "2us"
  }
}

wheel {
  plugin  = "kwheel"
  library = var.library
}

hrtimer {
  plugin = "hrtimer"
}

clockevent "local" {
  plugin = "lapic"
  mode   = "tsc_deadline"
}

kernel {
  posix_timer_signals = "consistent"
}

workload "cyclictest" "rt" {
  threads  = 4
  interval = "1000us"
  distance = "500us"
  priority = 99
}

workload "kernel_timers" "vmstat" {
  period     = "1s"
  deferrable = true
}

workload "kernel_timers" "watchdog" {
  period = "4s"
}

run {
  duration = "1s"
  seed     = 1
}

variant "mainline" {
  vars = { library = "bin/oracle/hz1000/libktimer-oracle.so" }
}
variant "patched" {
  vars = { library = "bin/oracle/patched/libktimer-oracle.so" }
}
