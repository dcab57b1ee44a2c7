# The configuration sketch of the original design, in valid HCL: a one-line
# block may hold only one argument, so blocks with several are written out.
variable "hang_delay" { default = "max_hang_time" }

machine {
  cpus    = 8
  hz      = 1000
  nohz    = "idle" # off | idle | full
  highres = true
  idle_state "C1" {
    exit_latency     = "2us"
    target_residency = "2us"
  }
  idle_state "C6" {
    exit_latency      = "133us"
    target_residency  = "600us"
    stops_local_timer = true
  }
}

wheel {
  plugin  = "wheel"
  layout  = "cascade"
  catchup = "per_jiffy"
}

hrtimer {
  plugin     = "hrtimer"
  hang_delay = var.hang_delay
}

clockevent "local" {
  plugin = "lapic"
  mode   = "tsc_deadline"
}

clockevent "broadcast" { plugin = "hpet" }

kernel { posix_timer_signals = "consistent" }

workload "cyclictest" "rt" {
  threads  = 4
  cpus     = [4, 5, 6, 7]
  interval = "1000us"
  distance = "500us"
  priority = 99
}

run {
  duration = "2s"
  seed     = 1
}

variant "fixed" { vars = { hang_delay = "fixed_100ms" } }
variant "capped" { vars = { hang_delay = "max_hang_time" } }
