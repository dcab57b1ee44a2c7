package main

import (
	"strings"
	"testing"
)

const sample = `
machine {
  cpus = 2
  idle_state "C6" {
    exit_latency     = "133us"
    target_residency = "600us"
  }
}
kernel {
  syscall_cost = "500ns"
}
clockevent "local" {
  plugin = "hpet"
  hpet {}
}
`

// TestOverride: a knob's shipped value is read from the file, or from the
// owner's schema when absent, and an override changes that one attribute,
// creating the block it lives in when needed.
func TestOverride(t *testing.T) {
	for _, tc := range []struct {
		k    knob
		base float64
		set  float64
		want string
	}{
		{kcost("syscall", ""), 500, 250, `syscall_cost = "250ns"`},
		{kcost("context_switch", ""), 1200, 2400, `context_switch_cost = "2400ns"`},
		{knob{path: []block{{typ: "machine"}, {typ: "idle_state", labels: []string{"C6"}}}, attr: "exit_latency", kind: "duration"}, 133000, 66500, `exit_latency     = "66500ns"`},
		{knob{path: wheelBlk, attr: "iteration_cost_ns", kind: "number"}, 1.7, 3.4, "iteration_cost_ns = 3.4"},
		{knob{path: []block{{typ: "clockevent", labels: []string{"local"}}, {typ: "hpet"}}, attr: "read_cost", kind: "duration", def: "1us"}, 1000, 2000, `read_cost = "2000ns"`},
	} {
		v, err := baseValue([]byte(sample), tc.k)
		if err != nil || v != tc.base {
			t.Errorf("baseValue(%s) = %v, %v; want %v", tc.k.name(), v, err, tc.base)
		}
		out, err := override([]byte(sample), tc.k, tc.set)
		if err != nil {
			t.Fatalf("override(%s): %v", tc.k.name(), err)
		}
		if !strings.Contains(string(out), tc.want) {
			t.Errorf("override(%s, %v) =\n%s\nwant it to contain %q", tc.k.name(), tc.set, out, tc.want)
		}
		if v, err := baseValue(out, tc.k); err != nil || v != tc.set {
			t.Errorf("baseValue after override(%s) = %v, %v; want %v", tc.k.name(), v, err, tc.set)
		}
	}
}
