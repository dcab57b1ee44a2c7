package kernel_test

import (
	"testing"

	"github.com/tickemu/tickemu/framework/config"
	"github.com/tickemu/tickemu/internal/simtest"
)

// TestLowResNohzNoLostWakeup: in low-res NO_HZ mode an interrupt that reaches
// an idle CPU in the last tick period before its next hrtimer must not leave
// the tick stopped for good. The clock_was_set IPI from CPU 1 (clock_jump at
// 28 ms, a tick boundary at HZ=250) wakes CPU 0 two milliseconds before its
// cyclictest expiry (30.001 ms). tick_nohz_next_event() then sees the hrtimer
// through cmp_next_hrtimer_event() (kernel/time/timer.c), rounded up to the
// tick (32 ms), not pulled back to basemono, and the stopped tick that fires
// clears ts->next_tick (tick_sched_handle()), so the next idle entry
// reprograms it. Before both fixes the tick was programmed in the past at
// basemono, fired once, and every later evaluation skipped the "unchanged"
// expiry: CPU 0 never woke again (2 cycles in 200 ms).
func TestLowResNohzNoLostWakeup(t *testing.T) {
	src := `
machine {
  cpus    = 2
  hz      = 250
  highres = false
}
hrtimer {
  clock_was_set_ipi = "all"
}
workload "cyclictest" "c" {
  cpus         = "0"
  interval     = "10ms"
  priority     = 90
  start_jitter = "0s"
}
workload "clock_jump" "ipi" {
  cpu   = 1
  at    = "28ms"
  delta = "1ms"
}
run {
  duration = "200ms"
}`
	r := simtest.Run(t, src, config.Options{}, nil)
	if cycles := simtest.Metric(t, r, "Cyclictest", "cycles"); cycles < 19 {
		t.Errorf("cyclictest ran %v cycles of 10 ms in 200 ms, want 19-20 (a lost wakeup stops CPU 0's tick for good)", cycles)
	}
	if n := r.Total("ipi_sent"); n < 1 {
		t.Errorf("%d IPIs sent, want the clock_was_set IPI that exposes the bug", n)
	}
}
