package kernel_test

import (
	"testing"

	"github.com/tickemu/tickemu/framework/config"
	"github.com/tickemu/tickemu/internal/simtest"
)

// TestIdleStateNamedPoll: an idle state named "poll" shares the counter
// idle_enter:poll with the polling state (both count into the CPU's counter
// block), so a machine whose state is named "poll" reports the sum of what
// the same machine reports under idle_enter:C1 and idle_enter:poll when the
// state is named C1. The sleep sometimes ends before the state's target
// residency and sometimes after, so the governor picks both.
func TestIdleStateNamedPoll(t *testing.T) {
	src := func(name string) string {
		return `
machine {
  cpus = 2
  idle_state "` + name + `" {
    exit_latency     = "2us"
    target_residency = "150us"
  }
}
governor {
  plugin = "menu"
}
workload "cyclictest" "c" {
  threads     = 2
  interval    = "200us"
  dma_latency = false
}
run {
  duration = "20ms"
}`
	}
	c1 := simtest.Run(t, src("C1"), config.Options{}, nil)
	named := simtest.Run(t, src("poll"), config.Options{}, nil)
	state, poll := c1.Total("idle_enter:C1"), c1.Total("idle_enter:poll")
	if state == 0 || poll == 0 {
		t.Fatalf("state C1: %d C1 and %d poll entries, want both", state, poll)
	}
	if got := named.Total("idle_enter:poll"); got != state+poll {
		t.Errorf("state named poll: idle_enter:poll %d, want %d + %d", got, state, poll)
	}
	if got, want := named.Total("idle_residency_ns:poll"), c1.Total("idle_residency_ns:C1"); got != want {
		t.Errorf("state named poll: idle_residency_ns:poll %d, want C1's %d", got, want)
	}
}
