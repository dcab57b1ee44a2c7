# A KVM guest with the haltpoll cpuidle driver, for `tickemu replay CAPTURE
# --config`: the driver's two states, POLL (the model's polling state 0) and
# haltpoll (HLT, exit latency and target residency 1 us:
# drivers/cpuidle/cpuidle-haltpoll.c), as the 2-CPU Firecracker guest the
# 6.18 captures of docs/replay.md ran on (HZ 250, NO_HZ idle, high-res
# timers, lapic-deadline). The haltpoll governor is not modelled: menu stands
# in. Under a PM QoS request of 0 (cyclictest's /dev/cpu_dma_latency, or
# `--pm-qos 0`) both poll with the tick kept, as haltpoll_select() does
# (drivers/cpuidle/governors/haltpoll.c: latency_req 0 returns state 0 with
# stop_tick false).
#
#   tickemu replay cyc.trace --config examples/replay/kvm-haltpoll.hcl --pm-qos 0

machine {
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
  plugin = "menu"
}
