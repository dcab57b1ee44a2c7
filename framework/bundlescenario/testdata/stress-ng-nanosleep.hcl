# The scenario of capture bundle test: stress-ng --nanosleep 1 --timer 1 --timer-freq 1000
# on 6.18.44-fc-v1272 x86_64, 2 CPUs, HZ 250, NO_HZ idle (written by tickemu's bundle translation).
# note: run length: the capture's wall time, 1234ms (the command's flags set none)
# note: cpuidle driver haltpoll: its states' latencies and residencies are the model's; the driver's own behaviour is not modelled
# note: a KVM guest: programming the clockevent traps to the hypervisor, which the default device costs do not include
# note: stress-ng's instances are not pinned; the model places instance i on CPU i
# note: stress-ng --nanosleep: the method is random, the only one before V0.17.00 (give --nanosleep-method all for later versions' default)
# note: stress-ng's parent process (it forks the instances and waits for them) is not modelled
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
workload "stress_ng_nanosleep" "nanosleep" {
  instances = 1
}
workload "stress_ng_timer" "timer" {
  instances = 1
  freq      = "1000Hz"
}
run {
  duration = "1234ms"
  seed     = 1
}
