# A laptop-like machine for `tickemu replay CAPTURE --config`: the Skylake
# C-state table of docs/reference/calibration.md section 12 (C1, C1E, C6) and
# the menu governor, which keeps the tick for an idle predicted shorter than
# a tick. Without idle states the model has no cpuidle driver and every idle
# entry stops the tick.
#
#   tickemu replay framework/replay/testdata/captures/lkml-nohz-tick-stop-6.11.txt --config examples/replay/laptop.hcl

machine {
  nohz = "idle"
  idle_state "C1" {
    exit_latency     = "2us"
    target_residency = "2us"
  }
  idle_state "C1E" {
    exit_latency     = "10us"
    target_residency = "20us"
  }
  idle_state "C6" {
    exit_latency      = "133us"
    target_residency  = "600us"
    stops_local_timer = false
  }
}

governor {
  plugin = "menu"
}
