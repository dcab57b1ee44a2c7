# The A/B scenario of the Python example governor: two CPUs with a shallow
# (C1) and a deep (C6) idle state, cyclictest sleeping about 1 ms (C6 fits)
# and a 250 us hrtimer on CPU 1 (only C1 fits), so the governor's choice
# matters. pygov_test.go runs it with governor = "always_stop" (builtin) and
# "pygov" (tickemu-plugin-pygov on --plugin-dir) and compares the results.
variable "governor" {
  default = "always_stop"
}
machine {
  cpus    = 2
  hz      = 250
  nohz    = "idle"
  highres = true
  idle_state "C1" {
    exit_latency     = "2us"
    target_residency = "2us"
  }
  idle_state "C6" {
    exit_latency     = "100us"
    target_residency = "400us"
  }
}
governor {
  plugin = var.governor
}
workload "cyclictest" "rt" {
  threads  = 2
  interval = "1000us"
  distance = "300us"
  priority = 99
  dma_latency = false
}
workload "kernel_timers" "vmstat" {
  period     = "50ms"
  deferrable = true
}
workload "hrtimer_load" "short" {
  cpus   = "1"
  count  = 1
  period = "250us"
}
run {
  duration = "200ms"
  seed     = 1
}
