# The scenario of capture bundle test: cyclictest -t2 -a -i 1000 -l 50 -m -q -p 80
# on 6.18.44-fc-v1272 x86_64, 2 CPUs, HZ 250, NO_HZ idle (written by tickemu's bundle translation).
# note: cpuidle driver haltpoll: its states' latencies and residencies are the model's; the driver's own behaviour is not modelled
# note: a KVM guest: programming the clockevent traps to the hypervisor, which the default device costs do not include
# note: cyclictest thread i is pinned to CPU i mod 2 (cpu_for_thread_ua())
# note: cyclictest's main thread (a 10 ms usleep() loop printing the statistics) is not modelled
machine {
  cpus    = 2
  hz      = 250
  nohz    = "idle"
  highres = true
  idle_state "haltpoll_idle" {
    exit_latency     = "1us"
    target_residency = "1us"
  }
}
clockevent "local" {
  plugin = "lapic"
  mode   = "tsc_deadline"
}
governor {
  plugin                       = "haltpoll"
  guest_halt_poll_ns           = 0
  guest_halt_poll_allow_shrink = false
}
kernel {
  version             = "6.18.44"
  timer_migration     = true
  cputime_accounting  = "tick"
  irq_time_accounting = false
}
workload "cyclictest" "cyclictest" {
  threads     = 2
  interval    = "1000us"
  distance    = "500us"
  priority    = 80
  loops       = 50
  dma_latency = true
}
run {
  duration = "52ms"
  seed     = 1
}
