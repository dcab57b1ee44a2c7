# The hang-cap A/B: configs/hang-timermix.hcl (stress-ng --timermix, whose
# POSIX timers drive hrtimer_interrupt() into hangs) under the builtin
# max_hang_time policy and under hang_cap, which caps the delay again (at its
# default cap, 1 us, below the scenario's longest hang delay, 1.9 us).
#
#   tickemu compare examples/hangcap/ab.hcl --variants max_hang_time,hang_cap --seeds 2 --plugin-dir DIR
variable "policy" {
  default = "max_hang_time"
}

variable "duration" {
  default = "600ms"
}

machine {
  cpus = 2
  hz   = 1000
  nohz = "idle"
}

hrtimer {
  hang_delay = "max_hang_time"
}

hang_policy {
  plugin = var.policy
}

clockevent "local" {
  plugin = "lapic"
  mode   = "tsc_deadline"
}

kernel {
  syscall_cost = "500ns"
}

workload "timermix" "timermix" {
  instances    = 2
  adjust_every = 8192
  starve_limit = "10ms"
}

run {
  duration = var.duration
  seed     = 1
}

variant "max_hang_time" {
  vars = { policy = "max_hang_time" }
}

variant "hang_cap" {
  vars = { policy = "hang_cap" }
}
