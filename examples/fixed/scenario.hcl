# A/B scenario for the example plugin: the local clock event device is the
# builtin TSC-deadline LAPIC or the example's "fixed" device, which models the
# same hardware as an ideal timer (constant write cost, no late writes).
#
#   tickemu build --with github.com/tickemu/tickemu/examples/fixed=. -o tickemu-fixed
#   ./tickemu-fixed compare scenario.hcl --seeds 10
#   ./tickemu-fixed run scenario.hcl --variant fixed --var isolation=process

variable "local" {
  default     = "fixed"
  description = "the local clock event device: fixed (this module) or lapic (builtin)"
}

variable "isolation" {
  default     = "inprocess"
  description = "where the local device runs: inprocess or process"
}

machine {
  cpus = 2
  hz   = 1000
}

clockevent "local" {
  plugin    = var.local
  isolation = var.isolation
  # 40 ns per WRMSR and 1 us from the deadline to the interrupt.
  fixed {
    write_cost = "40ns"
    latency    = "1us"
  }
  lapic {
    mode = "tsc_deadline"
  }
}

workload "cyclictest" "rt" {
  threads  = 2
  interval = "250us"
  priority = 99
}

workload "hrtimer_load" "load" {
  count  = 8
  period = "50us"
}

run {
  duration = "20ms"
  seed     = 3
}

variant "lapic" {
  vars = { local = "lapic" }
}

variant "fixed" {
  vars = { local = "fixed" }
}
