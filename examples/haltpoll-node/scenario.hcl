# The A/B scenario of the TypeScript haltpoll governor (ts_haltpoll): a KVM
# guest with the cpuidle-haltpoll driver's states, POLL (state 0) and
# haltpoll (HLT, exit latency and target residency 1 us), where idle
# periods of about 100 us (cyclictest) open the guest_halt_poll_ns window
# and the 2 ms sleeps of a timer workload on CPU 1 close it again.
# haltpoll_test.go runs it with governor = "haltpoll" (builtin) and
# "ts_haltpoll" (tickemu-plugin-ts_haltpoll on --plugin-dir) and compares
# the results.
#
#   tickemu run examples/haltpoll-node/scenario.hcl --var governor=ts_haltpoll --plugin-dir DIR
variable "governor" {
  default = "haltpoll"
}
machine {
  cpus    = 2
  hz      = 250
  nohz    = "idle"
  highres = true
  idle_state "haltpoll" {
    exit_latency     = "1us"
    target_residency = "1us"
  }
}
clockevent "local" {
  plugin = "lapic"
  mode   = "tsc_deadline"
}
governor {
  plugin = var.governor
}
workload "cyclictest" "rt" {
  threads     = 1
  cpus        = "0"
  interval    = "100us"
  priority    = 99
  dma_latency = false
}
workload "hrtimer_load" "slow" {
  cpus   = "1"
  count  = 1
  period = "2ms"
}
workload "hrtimer_load" "fast" {
  cpus   = "1"
  count  = 1
  period = "150us"
  first  = "100ms"
}
run {
  duration = "200ms"
  seed     = 1
}
