package workload_test

import (
	"testing"

	"github.com/tickemu/tickemu/framework/config"
	"github.com/tickemu/tickemu/internal/simtest"
)

// TestCyclictestLoops: with loops (-l) a thread stops after that many
// wakeups (cyclictest's timerthread() leaves its loop at max_cycles), and
// the first to stop ends the others at their next wakeup (the main loop's
// shutdown: a 6.18 capture of cyclictest -t -a -i 1000 -l 1000 prints T:1,
// interval 1.5 ms, with C: 679); without, each runs to the end of the run.
func TestCyclictestLoops(t *testing.T) {
	for _, tc := range []struct {
		loops  string
		lo, hi [2]float64 // cycles of thread 0 (1 ms) and thread 1 (1.5 ms) in 20 ms
	}{
		{"5", [2]float64{5, 3}, [2]float64{5, 4}},      // thread 1 is cut short after 3-4
		{"15", [2]float64{15, 10}, [2]float64{15, 11}}, // and after 10-11
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
