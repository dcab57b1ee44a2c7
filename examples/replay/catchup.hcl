# Two timer-wheel catch-up strategies on the same replayed capture.
#
# The capture (nohz-idle-catchup.txt, hand-written in the layout of a tracefs
# trace, see README.md) is a 2-CPU HZ 1000 machine whose CPU 1 is idle but
# for an RT task sleeping 10 s at a time and the machine-check poll
# (mce_timer_fn, a 5-minute timer_list timer that is not deferrable). With
# the tick stopped, CPU 1's wheel next runs when the poll comes due, 300000
# jiffies later; a sleeper wakeup 0.2 ms after it waits for that softirq.
#
#   tickemu compare examples/replay/catchup.hcl --seeds 6
#   tickemu replay examples/replay/nohz-idle-catchup.txt --config examples/replay/wheel-3.10.hcl --variant per_jiffy
#
# The same on the real capture of framework/replay/testdata/captures (5 ms of
# one CPU: no catch-up to speak of, so the strategies agree):
#
#   tickemu compare examples/replay/catchup.hcl --seeds 6 \
#       --var capture=framework/replay/testdata/captures/lkml-nohz-tick-stop-6.11.txt --var duration=25ms
#
# The machine's CPU count and HZ come from the capture (machine sets neither).

variable "catchup" {
  default     = "per_jiffy"
  description = "__run_timers catch-up: per_jiffy (3.10), skip_empty (3.15), next_expiry (4.8+)"
}

variable "duration" {
  default     = "301s"
  description = "simulated span: the capture's, or longer"
}

variable "capture" {
  default     = "examples/replay/nohz-idle-catchup.txt"
  description = "the capture to replay, relative to the working directory"
}

machine {
  nohz = "idle"
}

# As configs/nohz-catchup.hcl: the 3.10 cascading wheel, 3.6 ns per empty jiffy.
wheel {
  layout            = "cascade"
  catchup           = var.catchup
  iteration_cost_ns = 3.6
}

governor {
  plugin = "always_stop"
}

workload "replay" "capture" {
  capture = var.capture
}

run {
  duration = var.duration
}

variant "per_jiffy" {
  vars = { catchup = "per_jiffy" }
}

variant "next_expiry" {
  vars = { catchup = "next_expiry" }
}
