package workload_test

import (
	"bytes"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/tickemu/tickemu/framework/config"
	"github.com/tickemu/tickemu/framework/experiment"
	"github.com/tickemu/tickemu/framework/workload"
	"github.com/tickemu/tickemu/internal/simtest"
)

// programCase runs one workload type's program alone on a 2-CPU machine for
// 20 ms and checks what its program must do, in the numbers its report gives.
type programCase struct {
	block string // the workload block(s); "w" is the instance under test
	check func(t *testing.T, r *experiment.Result, trace string)
}

const programMachine = `
machine {
  cpus = 2
}
run {
  duration = "20ms"
}
`

// within fails unless lo <= v <= hi.
func within(t *testing.T, what string, v, lo, hi float64) {
	t.Helper()
	if v < lo || v > hi {
		t.Errorf("%s = %v, want %v..%v", what, v, lo, hi)
	}
}

// rateMatches checks that a per-second metric is its count over the 20 ms run.
func rateMatches(t *testing.T, r *experiment.Result, bench, count, rate string) {
	t.Helper()
	n, per := simtest.Metric(t, r, bench, count), simtest.Metric(t, r, bench, rate)
	if n <= 0 || per != n/0.020 {
		t.Errorf("%s: %s = %v, %s = %v; want a positive count and count / 20 ms", bench, count, n, rate, per)
	}
}

var programCases = map[string]programCase{
	// timerthread(): clock_nanosleep(ABS, next) every interval, then
	// clock_gettime; one latency sample per wakeup. Thread i's interval is
	// 1000 us + i * 500 us (-i 1000 -d 500).
	"cyclictest": {`workload "cyclictest" "w" {
  threads = 2
}`, func(t *testing.T, r *experiment.Result, _ string) {
		for i, b := range r.Workloads[0].Bench {
			m := map[string]float64{}
			for _, x := range b.Metrics {
				m[x.Name] = x.Value
			}
			periods := 20.0 / (1 + 0.5*float64(i)) // 20 ms of intervals
			within(t, b.Sub+" cycles", m["cycles"], periods-2, periods)
			if !(m["min-latency-ns"] <= m["avg-latency-ns"] && m["avg-latency-ns"] <= m["max-latency-ns"] && m["min-latency-ns"] > 0) {
				t.Errorf("%s: min %v avg %v max %v, want 0 < min <= avg <= max", b.Sub, m["min-latency-ns"], m["avg-latency-ns"], m["max-latency-ns"])
			}
		}
		if len(r.Workloads[0].Bench) != 2 {
			t.Errorf("%d bench lines, want one per thread (2)", len(r.Workloads[0].Bench))
		}
	}},
	// One forwarding hrtimer per CPU every 100 us: 199 expiries per CPU in
	// 20 ms (the first is at 100 us).
	"hrtimer_load": {`workload "hrtimer_load" "w" {}`, func(t *testing.T, r *experiment.Result, _ string) {
		within(t, "expiries", simtest.Metric(t, r, "HrtimerLoad", "expiries"), 396, 400)
		rateMatches(t, r, "HrtimerLoad", "expiries", "expiries/s")
	}},
	// pktgen: per packet, 2 us of work and an hrtimer_start(300 us, REL_SOFT)
	// restart; Gbps is packets/s times the frame size.
	"ncm": {`workload "ncm" "w" {}`, func(t *testing.T, r *experiment.Result, _ string) {
		pps := simtest.Metric(t, r, "Ncm", "packets/s")
		within(t, "packets/s", pps, 100e3, 500e3) // at most one per 2 us of packet_work
		if g := simtest.Metric(t, r, "Ncm", "Gbps"); g != pps*1514*8/1e9 {
			t.Errorf("Gbps = %v, want packets/s * 1514 B * 8 = %v", g, pps*1514*8/1e9)
		}
		within(t, "device-writes/packet", simtest.Metric(t, r, "Ncm", "device-writes/packet"), 0, 2)
	}},
	// clock_settime(CLOCK_REALTIME, now + 1 s) at 5 ms next to a 1 ms
	// cyclictest: the fixed kernel takes about one interrupt per cyclictest
	// period after the jump, not a storm.
	"clock_jump": {`workload "clock_jump" "w" {
  at = "5ms"
}
workload "cyclictest" "c" {}`, func(t *testing.T, r *experiment.Result, _ string) {
		within(t, "hrtimer-interrupts after the jump", simtest.Metric(t, r, "ClockJump", "hrtimer-interrupts"), 10, 40)
	}},
	// A busy loop: bogo ops are whole loops over the run.
	"stress_ng_cpu": {`workload "stress_ng_cpu" "w" {}`, func(t *testing.T, r *experiment.Result, _ string) {
		rateMatches(t, r, "StressNgCPU", "bogo-ops", "bogo-ops/s")
	}},
	"stress_ng_hrtimers": {`workload "stress_ng_hrtimers" "w" {}`, func(t *testing.T, r *experiment.Result, _ string) {
		rateMatches(t, r, "StressNgHrtimers", "bogo-ops", "bogo-ops/s")
	}},
	// stress-ng --timer: a periodic POSIX timer whose signal handler counts a
	// bogo op; a short interval overruns.
	"stress_ng_timer": {`workload "stress_ng_timer" "w" {}`, func(t *testing.T, r *experiment.Result, _ string) {
		rateMatches(t, r, "StressNgTimer", "bogo-ops", "bogo-ops/s")
		if o := simtest.Metric(t, r, "StressNgTimer", "overruns"); o < 0 {
			t.Errorf("overruns = %v, want >= 0", o)
		}
	}},
	// stress-ng --nanosleep: 8 SCHED_OTHER threads of 19 random sleeps a
	// round, 8 ns to 262 us each; each sleep also waits the 50 us timer
	// slack, so a round takes 0.95 ms (19 x 50 us) to 1.5 ms (plus the
	// random 262 us in all, on average): 8 threads x 20 ms hold 80 to 170
	// rounds, and a sleep overruns by about the slack and its wakeup (less
	// when it expires inside its slack at another timer's interrupt: the
	// main thread's usleep(0) and 10 ms sleeps, the other threads').
	"stress_ng_nanosleep": {`workload "stress_ng_nanosleep" "w" {}`, func(t *testing.T, r *experiment.Result, _ string) {
		rateMatches(t, r, "StressNgNanosleep", "bogo-ops", "bogo-ops/s")
		within(t, "bogo-ops", simtest.Metric(t, r, "StressNgNanosleep", "bogo-ops"), 80, 170)
		within(t, "sleep-overrun-ns", simtest.Metric(t, r, "StressNgNanosleep", "sleep-overrun-ns"), 45e3, 60e3)
	}},
	// timermix: no hang on a quiet machine with the default hang handling.
	"timermix": {`workload "timermix" "w" {}`, func(t *testing.T, r *experiment.Result, _ string) {
		rateMatches(t, r, "Timermix", "bogo-ops", "bogo-ops/s")
		if h := simtest.Metric(t, r, "Timermix", "hrtimer-hangs"); h != 0 {
			t.Errorf("hrtimer-hangs = %v, want 0", h)
		}
	}},
	// Background wheel timers re-armed every period on every CPU: 1 ms
	// timers expire about 20 times per CPU in 20 ms.
	// testdata/replay-small.txt: an RT sleeper on CPU 1 sleeping 0.8 ms 15
	// times, a 2 ms watchdog hrtimer restarting itself (each restart traced
	// as the kernel does, an hrtimer_start after the callback: 7 in the
	// capture's 15 ms, and the last one's expiry at 16 ms), two timer_list
	// timers (one re-armed, one cancelled).
	"replay": {`workload "replay" "w" {
  capture = "testdata/replay-small.txt"
}`, func(t *testing.T, r *experiment.Result, trace string) {
		within(t, "sleeper wakeups", simtest.Metric(t, r, "Replay", "sleeper-wakeups"), 15, 15)
		within(t, "timer operations", simtest.Metric(t, r, "Replay", "timer-ops"), 27, 27)
		if n := strings.Count(trace, "function=watchdog_timer_fn now="); n != 8 {
			t.Errorf("%d watchdog_timer_fn expiries in 20 ms, want 8 (every 2 ms while the capture restarts it)", n)
		}
		if !strings.Contains(trace, "timer_cancel") {
			t.Error("the cancelled timer_list timer is not cancelled")
		}
	}},
	"kernel_timers": {`workload "kernel_timers" "w" {
  period = "1ms"
}`, func(t *testing.T, r *experiment.Result, trace string) {
		n := strings.Count(trace, "timer_expire_entry") // only this workload's timers run
		within(t, "timer_expire_entry events", float64(n), 36, 42)
		if !strings.Contains(trace, "function=w ") {
			t.Error("the timers' callback is not named after the block (function=w)")
		}
	}},
}

// TestPrograms runs each workload type's program (every type must have a
// case) and checks its numbers; the same config twice gives the same report.
func TestPrograms(t *testing.T) {
	for _, ty := range workload.Types() {
		t.Run(ty.Name, func(t *testing.T) {
			tc, ok := programCases[ty.Name]
			if !ok {
				t.Fatalf("workload type %s has no case in programCases", ty.Name)
			}
			src := programMachine + tc.block
			var tr bytes.Buffer
			r := simtest.Run(t, src, config.Options{}, &tr)
			tc.check(t, r, tr.String())
			again := simtest.Run(t, src, config.Options{}, nil)
			if !reflect.DeepEqual(fmt.Sprint(r.Workloads), fmt.Sprint(again.Workloads)) {
				t.Errorf("two runs of the same config differ:\n%v\n%v", r.Workloads, again.Workloads)
			}
		})
	}
}
