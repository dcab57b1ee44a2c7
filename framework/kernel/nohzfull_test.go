package kernel_test

import (
	"testing"

	"github.com/tickemu/tickemu/framework/config"
	"github.com/tickemu/tickemu/internal/simtest"
)

// nohzFullSrc is a housekeeping CPU 0 left idle next to nohz_full CPUs 1-3,
// each running one busy task, CPUs 1-2 with a 1 ms wheel timer.
func nohzFullSrc(era string) string {
	kernel := ""
	if era != "" {
		kernel = "kernel {\n  nohz_full_tick = \"" + era + "\"\n}\n"
	}
	return `
machine {
  cpus      = 4
  nohz      = "full"
  nohz_full = "1-3"
}
` + kernel + `
workload "stress_ng_cpu" "busy" {
  instances = 3
  cpus      = "1-3"
}
workload "kernel_timers" "poll_1ms" {
  cpus   = "1-2"
  period = "1ms"
}
run {
  duration = "2s"
}`
}

// TestNohzFullJiffiesNeverStale: with nohz_full CPUs around, the CPU with the
// do_timer duty keeps its tick when idle (can_stop_idle_tick()), so jiffies
// never lag CLOCK_MONOTONIC by more than a tick and the busy CPUs' 1 ms wheel
// timers keep expiring. When the idle timekeeper stopped its tick and
// dropped the duty, which nohz_full CPUs never take, jiffies stood still and
// the timers never expired.
func TestNohzFullJiffiesNeverStale(t *testing.T) {
	for _, era := range []string{"", "max_deferment", "offload"} {
		r := simtest.Run(t, nohzFullSrc(era), config.Options{}, nil)
		var expired [4]int64
		for _, c := range r.Kernel.Counters {
			if c.Source == "kernel" && c.Name == "timer_expire" && c.CPU >= 0 && c.CPU < 4 {
				expired[c.CPU] += c.Value
			}
		}
		for cpu := 1; cpu <= 2; cpu++ {
			// A 1-jiffy timer re-armed by its callback expires every other
			// jiffy in the wheel plugin, on housekeeping CPUs too.
			if expired[cpu] < 990 {
				t.Errorf("era %q: the 1 ms timer on nohz_full CPU %d expired %d times in 2 s, want ~1000 (jiffies stale?)", era, cpu, expired[cpu])
			}
		}
		if s := r.Total("jiffies_max_stale_ns"); s > 1100000 {
			t.Errorf("era %q: jiffies lagged CLOCK_MONOTONIC by up to %d ns, want at most about a tick (1 ms)", era, s)
		}
		if n := r.Kernel.CPUs[0].Ticks; n < 1990 {
			t.Errorf("era %q: timekeeper CPU 0 ticked %d times in 2 s while idle, want ~2000 (it keeps the tick for nohz_full CPUs)", era, n)
		}
	}
}

// TestNohzFullEras: what is left of the tick of a busy nohz_full CPU with no
// timer of its own (CPU 3). Before 4.17 the stopped tick is capped at 1 s
// (scheduler_tick_max_deferment()): it ticks about once a second. From 4.17
// (d84b31313ef8) it does not tick; a housekeeping CPU runs sched_tick_remote()
// for it once a second.
func TestNohzFullEras(t *testing.T) {
	for _, tc := range []struct {
		era              string
		minTicks, maxTks int64
		remote           bool
	}{
		{"max_deferment", 1, 4, false},
		{"offload", 0, 0, true},
	} {
		r := simtest.Run(t, nohzFullSrc(tc.era), config.Options{}, nil)
		ticks := r.Kernel.CPUs[3].Ticks
		if ticks < tc.minTicks || ticks > tc.maxTks {
			t.Errorf("%s: busy nohz_full CPU 3 ticked %d times in 2 s, want %d-%d", tc.era, ticks, tc.minTicks, tc.maxTks)
		}
		if remote := r.Total("sched_tick_remote"); (remote > 0) != tc.remote {
			t.Errorf("%s: %d sched_tick_remote() runs, want them: %v", tc.era, remote, tc.remote)
		}
	}
}

// TestNohzFullIdleExit: a task alone on nohz_full CPU 1 sleeping 200 us at a
// time (cyclictest), with the menu governor, which would keep the tick of
// such short idles. Its tick is stopped while the task runs alone and stays
// stopped at idle entry (cpuidle_idle_call(): stop_tick ||
// tick_nohz_tick_stopped()). Before 5.14 every idle exit restarted it
// (tick_nohz_restart_sched_tick()) and the task stopped it again: one stop
// and one cancel of the tick per wakeup. Since a5183862e76f (5.14)
// tick_nohz_idle_update_tick() leaves it stopped: one stop in the run. The
// same holds with teo.
func TestNohzFullIdleExit(t *testing.T) {
	for _, gov := range []string{"menu", "teo"} {
		for _, tc := range []struct {
			exit       string
			minStops   int64
			maxStops   int64
			maxCancels int64
		}{
			{"restart", 4900, 5100, 5100},
			{"conditional", 1, 1, 1},
		} {
			src := `
machine {
  cpus      = 2
  nohz      = "full"
  nohz_full = "1"
  idle_state "C1" {
    exit_latency     = "2us"
    target_residency = "2us"
  }
  idle_state "C6" {
    exit_latency     = "133us"
    target_residency = "600us"
  }
}
governor {
  plugin = "` + gov + `"
}
kernel {
  nohz_full_idle_exit = "` + tc.exit + `"
}
workload "cyclictest" "rt" {
  cpus        = "1"
  interval    = "200us"
  dma_latency = false
}
run {
  duration = "1s"
}`
			r := simtest.Run(t, src, config.Options{}, nil)
			var stops, cancels int64
			for _, c := range r.Kernel.Counters {
				if c.Source == "kernel" && c.CPU == 1 {
					switch c.Name {
					case "tick_stops":
						stops += c.Value
					case "hrtimer_cancel":
						cancels += c.Value
					}
				}
			}
			if stops < tc.minStops || stops > tc.maxStops || cancels > tc.maxCancels {
				t.Errorf("%s, %s: nohz_full CPU 1 stopped its tick %d times and cancelled an hrtimer %d times in 1 s of 200 us sleeps, want %d-%d stops and at most %d cancels",
					gov, tc.exit, stops, cancels, tc.minStops, tc.maxStops, tc.maxCancels)
			}
			if n := r.Kernel.CPUs[1].Ticks; n != 0 {
				t.Errorf("%s, %s: nohz_full CPU 1 ticked %d times, want 0", gov, tc.exit, n)
			}
		}
	}
}
