package workload_test

import (
	"testing"

	"github.com/tickemu/tickemu/framework/config"
	"github.com/tickemu/tickemu/internal/simtest"
)

// TestCyclictestLoops: with loops (-l) each thread stops after that many
// wakeups, whatever its interval (cyclictest's timerthread() leaves its
// loop at max_cycles); without, it runs to the end of the run.
func TestCyclictestLoops(t *testing.T) {
	for _, tc := range []struct {
		loops  string
		lo, hi [2]float64 // cycles of thread 0 (1 ms) and thread 1 (1.5 ms) in 20 ms
	}{
		{"5", [2]float64{5, 5}, [2]float64{5, 5}},
		{"15", [2]float64{15, 12}, [2]float64{15, 13}}, // thread 1 has room for 12-13 wakeups only
		{"0", [2]float64{18, 12}, [2]float64{20, 13}},
	} {
		r := simtest.Run(t, programMachine+`workload "cyclictest" "w" {
  threads = 2
  loops   = `+tc.loops+`
}`, config.Options{}, nil)
		for i, b := range r.Workloads[0].Bench {
			var cycles float64
			for _, m := range b.Metrics {
				if m.Name == "cycles" {
					cycles = m.Value
				}
			}
			if cycles < tc.lo[i] || cycles > tc.hi[i] {
				t.Errorf("loops = %s: %s cycles = %v, want %v..%v", tc.loops, b.Sub, cycles, tc.lo[i], tc.hi[i])
			}
		}
	}
}
