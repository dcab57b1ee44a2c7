package kernel_test

import (
	"strconv"
	"testing"

	"github.com/tickemu/tickemu/framework/config"
	"github.com/tickemu/tickemu/framework/experiment"
	"github.com/tickemu/tickemu/internal/simtest"
)

// migrationSrc: cyclictest (clock_nanosleep every 2 ms) on nohz_full CPU 1,
// a busy task on housekeeping CPU 0, CPU 2 idle.
func migrationSrc(on bool) string {
	return `
machine {
  cpus      = 3
  nohz      = "full"
  nohz_full = "1"
}
kernel {
  timer_migration = ` + strconv.FormatBool(on) + `
}
workload "stress_ng_cpu" "busy" {
  cpus = "0"
}
workload "cyclictest" "rt" {
  cpus     = "1"
  interval = "2ms"
  priority = 80
}
run {
  duration = "200ms"
}`
}

func counterOn(r *experiment.Result, source, name string, cpu int) int64 {
	var s int64
	for _, c := range r.Kernel.Counters {
		if c.Source == source && c.Name == name && c.CPU == cpu {
			s += c.Value
		}
	}
	return s
}

// TestNanosleepTimerPushedFromNohzFull follows cyclictest's sleeper hrtimer
// through kernel/time/hrtimer.c:switch_hrtimer_base() with
// timer_migration on: CPU 1 is nohz_full, so get_nohz_timer_target()
// (kernel/sched/core.c) picks the busy housekeeping CPU 0, and the 2 ms
// sleep is after CPU 0's next tick (hrtimer_check_target() allows it). The
// timer expires in CPU 0's hrtimer_interrupt(), whose hrtimer_wakeup() wakes
// the task on CPU 1 with a reschedule IPI (try_to_wake_up() ->
// ttwu_queue()). With timer_migration off it stays on CPU 1.
func TestNanosleepTimerPushedFromNohzFull(t *testing.T) {
	on := simtest.Run(t, migrationSrc(true), config.Options{}, nil)
	off := simtest.Run(t, migrationSrc(false), config.Options{}, nil)
	if n := counterOn(on, "kernel", "timer_migrations", 1); n < 90 {
		t.Errorf("timer_migration on: %d timers of CPU 1 queued elsewhere in 200 ms, want ~100 (one per cycle)", n)
	}
	if n := counterOn(on, "hrtimer", "migrated", 0); n < 90 {
		t.Errorf("timer_migration on: the hrtimer plugin queued %d timers on CPU 0's base, want ~100", n)
	}
	if n := counterOn(on, "kernel", "ipi_resched", 1); n < 90 {
		t.Errorf("timer_migration on: CPU 1 took %d reschedule IPIs, want ~100 (one wakeup from CPU 0 per cycle)", n)
	}
	if n := off.Total("timer_migrations"); n != 0 {
		t.Errorf("timer_migration off: %d timers migrated, want 0", n)
	}
	if n := counterOn(off, "kernel", "ipi_resched", 1); n != 0 {
		t.Errorf("timer_migration off: CPU 1 took %d reschedule IPIs, want 0 (it wakes itself)", n)
	}
}
