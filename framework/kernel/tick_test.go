package kernel_test

import (
	"bytes"
	"regexp"
	"testing"

	"github.com/tickemu/tickemu/framework/config"
	"github.com/tickemu/tickemu/internal/simtest"
)

func count(r interface{ Total(string) int64 }, name string) int64 { return r.Total(name) }

// TestTickStopsOnIdle: with NO_HZ idle an idle CPU stops its tick
// (tick_nohz_idle_stop_tick()) and wakes only for its next timer, here a wheel
// timer 100 ms out; with nohz=off it ticks every jiffy.
func TestTickStopsOnIdle(t *testing.T) {
	src := func(nohz string) string {
		return `
machine {
  cpus = 1
  nohz = "` + nohz + `"
}
workload "kernel_timers" "t" {
  period = "100ms"
}
run {
  duration = "1s"
}`
	}
	idle := simtest.Run(t, src("idle"), config.Options{}, nil)
	off := simtest.Run(t, src("off"), config.Options{}, nil)
	if n := count(idle, "local_timer_interrupts"); n < 9 || n > 12 {
		t.Errorf("nohz=idle: %d local timer interrupts in 1 s, want ~10 (one per 100 ms timer)", n)
	}
	if n := count(off, "ticks"); n < 990 {
		t.Errorf("nohz=off: %d ticks in 1 s at HZ=1000, want ~1000", n)
	}
	if n := count(idle, "timer_expire"); n < 9 || n > 10 {
		t.Errorf("nohz=idle: the 100 ms timer expired %d times in 1 s, want 9-10", n)
	}
}

// TestLowResHrtimerOnTick: in low-res mode hrtimers expire from the tick
// (hrtimer_run_queues()), so a 1 ms cyclictest at HZ=250 wakes up to a tick late
// (scenario 11 of docs/reference/hrtimer-clockevents.md), while high-res mode wakes it within microseconds.
func TestLowResHrtimerOnTick(t *testing.T) {
	src := func(highres string) string {
		return `
machine {
  cpus    = 1
  hz      = 250
  highres = ` + highres + `
}
workload "cyclictest" "c" {
  interval = "1000us"
  priority = 90
}
run {
  duration = "200ms"
}`
	}
	lo := simtest.Run(t, src("false"), config.Options{}, nil)
	hi := simtest.Run(t, src("true"), config.Options{}, nil)
	loMax := simtest.Metric(t, lo, "Cyclictest", "max-latency-ns")
	hiMax := simtest.Metric(t, hi, "Cyclictest", "max-latency-ns")
	if loMax < 1e6 || loMax > 4.1e6 {
		t.Errorf("low-res max latency = %.0f ns, want between 1 and 4 ms (a 4 ms tick)", loMax)
	}
	if hiMax > 20000 {
		t.Errorf("high-res max latency = %.0f ns, want a few us", hiMax)
	}
}

// TestRTPreemptsFair: a woken SCHED_FIFO cyclictest thread preempts a busy
// SCHED_OTHER task on its CPU at once (check_preempt_curr()).
func TestRTPreemptsFair(t *testing.T) {
	var trace bytes.Buffer
	r := simtest.Run(t, `
machine {
  cpus = 1
}
workload "cyclictest" "rt" {
  priority = 99
}
workload "stress_ng_cpu" "busy" {}
run {
  duration = "50ms"
}`, config.Options{}, &trace)
	if max := simtest.Metric(t, r, "Cyclictest", "max-latency-ns"); max > 30000 {
		t.Errorf("cyclictest max latency next to a fair task = %.0f ns, want a few us", max)
	}
	if !regexp.MustCompile(`sched_switch: prev_comm=stress-ng-cpu .* ==> next_comm=cyclictest`).MatchString(trace.String()) {
		t.Error("no switch from the fair task to cyclictest in the trace")
	}
}

// TestNohzFull: before 4.17 a nohz_full CPU running one busy task stops its
// tick down to the residual 1 Hz tick (scheduler_tick_max_deferment()); a
// housekeeping CPU with the same task ticks at HZ.
func TestNohzFull(t *testing.T) {
	r := simtest.Run(t, `
machine {
  cpus      = 2
  nohz      = "full"
  nohz_full = "1"
}
kernel {
  nohz_full_tick = "max_deferment"
}
workload "stress_ng_cpu" "busy" {
  instances = 2
}
run {
  duration = "3s"
}`, config.Options{}, nil)
	var ticks [2]int64
	for _, c := range r.Kernel.CPUs {
		ticks[c.CPU] = c.Ticks
	}
	if ticks[0] < 2900 {
		t.Errorf("housekeeping CPU 0 ticked %d times in 3 s, want ~3000", ticks[0])
	}
	if ticks[1] < 2 || ticks[1] > 6 {
		t.Errorf("nohz_full CPU 1 ticked %d times in 3 s, want ~3 (the residual 1 Hz tick)", ticks[1])
	}
}

// TestPeriodicLowRes: low-res mode with nohz=off runs the local device in
// periodic mode (tick_setup_periodic()): HZ interrupts a second and no
// programming per tick.
func TestPeriodicLowRes(t *testing.T) {
	r := simtest.Run(t, `
machine {
  cpus    = 1
  hz      = 250
  nohz    = "off"
  highres = false
}
clockevent "local" {
  plugin = "lapic"
  mode   = "oneshot" # TSC-deadline mode has no periodic mode
}
run {
  duration = "1s"
}`, config.Options{}, nil)
	c := r.Kernel.CPUs[0]
	if c.Ticks < 249 || c.Ticks > 251 {
		t.Errorf("periodic tick: %d ticks in 1 s at HZ=250, want 250", c.Ticks)
	}
	if c.DeviceWrites > 2 {
		t.Errorf("periodic tick: %d device writes, want none after setup", c.DeviceWrites)
	}
}
