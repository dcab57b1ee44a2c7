package kernel_test

import (
	"testing"

	"github.com/tickemu/tickemu/framework/config"
	"github.com/tickemu/tickemu/internal/simtest"
)

// TestClockWasSetIPIMask: clock_was_set() decides the IPI mask on the CPU
// that set the clock. Before 1e7f7fbcd40c ("all") on_each_cpu() interrupts
// the 3 other CPUs of a 4-CPU machine; from v5.15 ("needed") it evaluates
// update_needs_ipi() for each CPU there and smp_call_function_many() sends
// only to CPUs with an affected timer now due earlier: CPU 2, whose absolute
// CLOCK_REALTIME timer a forward jump pulls in. The IPIs saved show in the
// counters.
func TestClockWasSetIPIMask(t *testing.T) {
	src := func(mode string) string {
		return `
machine {
  cpus = 4
}
hrtimer {
  clock_was_set_ipi = "` + mode + `"
}
workload "hrtimer_load" "wall" {
  cpus   = "2"
  period = "0s"
  first  = "50ms"
  clock  = "realtime"
}
workload "clock_jump" "settime" {
  cpu   = 0
  at    = "5ms"
  delta = "20ms"
}
run {
  duration = "10ms"
}`
	}
	for _, tc := range []struct {
		mode string
		ipis map[int]int64
	}{
		{"all", map[int]int64{1: 1, 2: 1, 3: 1}},
		{"needed", map[int]int64{2: 1}},
	} {
		r := simtest.Run(t, src(tc.mode), config.Options{}, nil)
		got := map[int]int64{}
		for _, c := range r.Kernel.Counters {
			if c.Source == "kernel" && c.Name == "ipi_sent" && c.Value > 0 {
				got[c.CPU] = c.Value
			}
		}
		if len(got) != len(tc.ipis) {
			t.Errorf("clock_was_set_ipi=%s: IPIs by target CPU %v, want %v", tc.mode, got, tc.ipis)
			continue
		}
		for cpu, n := range tc.ipis {
			if got[cpu] != n {
				t.Errorf("clock_was_set_ipi=%s: IPIs by target CPU %v, want %v", tc.mode, got, tc.ipis)
			}
		}
	}
}
