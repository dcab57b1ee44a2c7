package kernel_test

import (
	"testing"

	"github.com/tickemu/tickemu/framework/config"
	"github.com/tickemu/tickemu/internal/simtest"
)

// TestGovernorDecidesTick: cpuidle_idle_call() stops the tick only when the
// governor says so (or it is stopped already). A task sleeping 200 us at a
// time on a machine with C1: menu and teo predict an idle shorter than a tick
// and keep it (tick_nohz_idle_retain_tick()); always_stop, the 3.10 idle
// loop, stops it on every idle entry. Without idle states there is no cpuidle
// driver and the tick stops whatever the governor.
func TestGovernorDecidesTick(t *testing.T) {
	src := func(gov string, states bool) string {
		st := ""
		if states {
			st = `
  idle_state "C1" {
    exit_latency     = "2us"
    target_residency = "2us"
  }`
		}
		return `
machine {
  cpus = 1` + st + `
}
governor {
  plugin = "` + gov + `"
}
workload "cyclictest" "c" {
  interval    = "200us"
  dma_latency = false
}
run {
  duration = "100ms"
}`
	}
	for _, tc := range []struct {
		gov           string
		states        bool
		stops, retain bool
	}{
		{"menu", true, false, true},
		{"teo", true, false, true},
		{"always_stop", true, true, false},
		{"menu", false, true, false},
	} {
		r := simtest.Run(t, src(tc.gov, tc.states), config.Options{}, nil)
		stops, retains := r.Total("tick_stops"), r.Total("tick_retains")
		if (stops > 10) != tc.stops || (retains > 10) != tc.retain {
			t.Errorf("%s (idle states %v): %d tick stops, %d retains in 100 ms of 200 us sleeps; want stops %v, retains %v",
				tc.gov, tc.states, stops, retains, tc.stops, tc.retain)
		}
		if tc.states && r.Total("idle_enter:C1")+r.Total("idle_enter:poll") < 400 {
			t.Errorf("%s: %d C1 and %d poll entries, want one per 200 us sleep", tc.gov, r.Total("idle_enter:C1"), r.Total("idle_enter:poll"))
		}
	}
}
