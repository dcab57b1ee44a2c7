# The machine and plugins of catchup.hcl without its workload and run, for
# `tickemu replay CAPTURE --config`: the 3.10 cascading wheel with a choice of
# catch-up, the always_stop governor (3.10: every idle entry stops the tick).
#
#   tickemu replay examples/replay/nohz-idle-catchup.txt --config examples/replay/wheel-3.10.hcl --variant per_jiffy

variable "catchup" {
  default     = "per_jiffy"
  description = "__run_timers catch-up: per_jiffy (3.10), skip_empty (3.15), next_expiry (4.8+)"
}

machine {
  nohz = "idle"
}

wheel {
  layout            = "cascade"
  catchup           = var.catchup
  iteration_cost_ns = 3.6
}

governor {
  plugin = "always_stop"
}

variant "per_jiffy" {
  vars = { catchup = "per_jiffy" }
}

variant "next_expiry" {
  vars = { catchup = "next_expiry" }
}
