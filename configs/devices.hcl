# One cyclictest-style workload on four clockevent setups.
#
#   lapic_deadline      x86 LAPIC in TSC-deadline mode (ARAT), PM QoS 10 us: C1 only
#   lapic_c6_broadcast  LAPIC without ARAT: C6 stops it, the HPET broadcasts
#   hpet_only           per-CPU HPET MSI channels as the local timers, C6 allowed
#   archtimer           Arm architected timer (always-on), C6 allowed
#
# The latency differences come from the idle state's exit latency (133 us for
# C6), the broadcast hand-off (HPET interrupt plus an IPI to the sleeper), and
# each device's programming cost (MSR write vs MMIO read-write-read); see
# docs/devices.md. The governor is always_stop so that every idle entry uses
# the deepest state that fits (C6 where allowed) and the devices are compared
# on the same path; with menu or teo (--var governor=menu) the tick is kept and
# C1 chosen for part of the 1 ms sleeps, and the C6 share of the latency drops.
#
#   tickemu compare configs/devices.hcl --seeds 5
#
# No regression: the variants are hardware. The one modelled kernel change
# for these devices is the Arm timer's CVAL programming (5.16), which costs
# one more register access per write:
#   tickemu bisect configs/devices.hcl --good 5.15 --bad 5.16 --var local=archtimer --metric Kernel.device-writes

variable "local" {
  default     = "lapic"
  description = "the local clockevent plugin"
}
variable "arat" {
  default = true
}
variable "governor" {
  default     = "always_stop"
  description = "cpuidle governor: always_stop (every wakeup from the deepest state that fits), menu or teo"
}
variable "qos" {
  default     = "2000s"
  description = "PM QoS limit cyclictest writes (--latency); 2000s = no limit"
}

machine {
  cpus = 4
  hz   = 1000
  nohz = "idle"
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

clockevent "local" {
  plugin = var.local
  lapic {
    mode = "tsc_deadline"
    arat = var.arat
  }
  hpet {}
  archtimer {
    freq = "24MHz"
  }
}

clockevent "broadcast" {
  plugin = "hpet"
}

governor {
  plugin = var.governor
}

workload "cyclictest" "rt" {
  threads  = 4
  interval = "1000us"
  distance = "500us"
  priority = 99
  latency  = var.qos
}

workload "kernel_timers" "vmstat" {
  period     = "1s"
  deferrable = true
}

run {
  duration = "1s"
  seed     = 1
}

variant "lapic_deadline" {
  vars = { local = "lapic", arat = true, qos = "10us" }
}
variant "lapic_c6_broadcast" {
  vars = { local = "lapic", arat = false }
}
variant "hpet_only" {
  vars = { local = "hpet" }
}
variant "archtimer" {
  vars = { local = "archtimer" }
}
