package workload

import (
	"fmt"

	"github.com/tickemu/tickemu/framework/kernel"
	"github.com/tickemu/tickemu/framework/sdk"
	"github.com/tickemu/tickemu/framework/sdk/ktime"
)

// timermix is stress-ng --timermix (stress-timermix.c, V0.19.05+): per
// instance six POSIX timers (REALTIME, MONOTONIC, PROCESS_CPUTIME,
// THREAD_CPUTIME, BOOTTIME, TAI) starting at 100 ns and three itimers (REAL,
// VIRTUAL, PROF) at 10 us; every 8192 POSIX-timer signals the handler shrinks
// the period by 5% unless the main loop has been starved for over 1 s, in which
// case it doubles. The main loop: nanosleep(100 us), clock_gettime, sched_yield.
// One bogo op = one handled signal.
type timermix struct {
	name      string
	instances int
	cpus      []int
	start     int64
	itStart   int64
	adjust    int
	starve    int64
	handler   int64
	jitter    int64
	b         bogo
	warmup    ktime.Time
	perClock  map[string]int64
}

var timermixClocks = []struct {
	name  string
	clock sdk.ClockID
}{
	{"CLOCK_REALTIME", sdk.ClockRealtime}, {"CLOCK_MONOTONIC", sdk.ClockMonotonic},
	{"CLOCK_PROCESS_CPUTIME_ID", kernel.ClockProcessCPUTime}, {"CLOCK_THREAD_CPUTIME_ID", kernel.ClockThreadCPUTime},
	{"CLOCK_BOOTTIME", sdk.ClockBoottime}, {"CLOCK_TAI", sdk.ClockTAI},
}

// timermixType is the timermix workload type (listed in workload.go).
var timermixType = Type{
	Name: "timermix",
	Doc:  "stress-ng --timermix: six POSIX timers and three itimers per instance, adaptive period",
	Schema: sdk.Schema{Attributes: []sdk.Attribute{
		count("instances", "1", "1", maxTasks, "instances (--timermix N), one process each"),
		attr("cpus", sdk.TypeString, "", "cpulist the instances are pinned to, round robin"),
		attr("initial_period", sdk.TypeDuration, "100ns", "starting period of the POSIX timers"),
		attr("itimer_period", sdk.TypeDuration, "10us", "period of the three itimers"),
		count("adjust_every", "8192", "1", "1000000000", "POSIX timer signals between period adjustments"),
		attr("starve_limit", sdk.TypeDuration, "1s", "main loop stall that counts as starvation"),
		attr("handler_work", sdk.TypeDuration, "150ns", "user work per handler run"),
		attr("start_jitter", sdk.TypeDuration, "1ms", "each instance starts a seeded random 0..start_jitter after boot"),
	}},
	New: func(name string, c *sdk.ConfigReader, m kernel.Machine) (Workload, error) {
		w := &timermix{name: name, instances: int(c.Int("instances")), start: c.Duration("initial_period"),
			itStart: c.Duration("itimer_period"), adjust: int(c.Int("adjust_every")), starve: c.Duration("starve_limit"),
			handler: c.Duration("handler_work"), jitter: c.Duration("start_jitter"), perClock: map[string]int64{}}
		if w.start < 1 || w.itStart < 1 || w.adjust < 1 {
			return nil, fieldErr("adjust_every", "periods and adjust_every must be positive")
		}
		cpus, err := instanceCPUs(c, w.instances, m.CPUs)
		w.cpus = cpus
		return w, err
	},
}

func (w *timermix) Setup(k *kernel.Kernel, warmup ktime.Time) error {
	w.b.warmup, w.warmup = warmup, warmup
	rng := k.Rand("timermix/" + w.name)
	for i := 0; i < w.instances; i++ {
		start := int64(0)
		if w.jitter > 0 {
			start = rng.Int63n(w.jitter)
		}
		if err := w.instance(k, w.cpus[i], start); err != nil {
			return err
		}
	}
	return nil
}

func (w *timermix) instance(k *kernel.Kernel, cpu int, start int64) error {
	p := k.NewProcess("stress-ng-timermix")
	ids := make([]int, len(timermixClocks))
	clockOf := map[int]string{}
	period, lastOK := w.start, w.start
	var timerCheck, lastCheck int64
	signals := 0
	count := func(clock string, now ktime.Time) {
		w.b.inc(now)
		if now >= w.warmup {
			w.perClock[clock]++
		}
	}
	// The SIGRTMIN handler: count, and every adjust_every signals re-tune all
	// six timers (stress_timermix_handler()).
	rtHandler := func(t *kernel.Task, info kernel.SigInfo) kernel.Program {
		step, j := 0, 0
		return kernel.ProgramFunc(func(t *kernel.Task, r kernel.Result) kernel.Action {
			step++
			if step == 1 {
				count(clockOf[info.TimerID], r.Now)
				signals++
				if signals%w.adjust != 0 {
					return kernel.Compute{NS: w.handler}
				}
				if timerCheck == lastCheck && int64(r.Now)-timerCheck > w.starve {
					period = max(lastOK, period*2) // starved: back off
				} else {
					lastOK = period
					period = max(period*95/100, 1)
				}
				lastCheck = timerCheck
				return kernel.Compute{NS: w.handler}
			}
			if signals%w.adjust == 0 && j < len(ids) {
				id := ids[j]
				j++
				return kernel.TimerSettime{ID: id, Value: period, Interval: period}
			}
			return kernel.Return{}
		})
	}
	itHandler := func(label string) kernel.Handler {
		return func(t *kernel.Task, info kernel.SigInfo) kernel.Program {
			done := false
			return kernel.ProgramFunc(func(t *kernel.Task, r kernel.Result) kernel.Action {
				if !done {
					done = true
					count(label, r.Now)
					return kernel.Compute{NS: w.handler}
				}
				return kernel.Return{}
			})
		}
	}
	setup := []step{
		do(kernel.ClockNanosleep{Clock: sdk.ClockMonotonic, Abs: true, T: start}),
		do(kernel.Sigaction{Signo: kernel.SIGRTMIN, Handler: rtHandler}),
		do(kernel.Sigaction{Signo: kernel.SIGALRM, Handler: itHandler("ITIMER_REAL")}),
		do(kernel.Sigaction{Signo: kernel.SIGVTALRM, Handler: itHandler("ITIMER_VIRTUAL")}),
		do(kernel.Sigaction{Signo: kernel.SIGPROF, Handler: itHandler("ITIMER_PROF")}),
	}
	for j, c := range timermixClocks {
		prev := j - 1
		setup = append(setup, func(r kernel.Result) kernel.Action {
			if prev >= 0 {
				ids[prev] = int(r.Ret)
				clockOf[int(r.Ret)] = timermixClocks[prev].name
			}
			return kernel.TimerCreate{Clock: c.clock, Notify: kernel.SigevSignal, Signo: kernel.SIGRTMIN}
		})
	}
	for j := range timermixClocks {
		setup = append(setup, func(r kernel.Result) kernel.Action {
			if j == 0 {
				last := len(ids) - 1
				ids[last] = int(r.Ret)
				clockOf[int(r.Ret)] = timermixClocks[last].name
			}
			return kernel.TimerSettime{ID: ids[j], Value: period, Interval: period}
		})
	}
	setup = append(setup,
		do(kernel.Setitimer{Which: kernel.ItimerReal, Value: w.itStart, Interval: w.itStart}),
		do(kernel.Setitimer{Which: kernel.ItimerVirtual, Value: w.itStart, Interval: w.itStart}),
		do(kernel.Setitimer{Which: kernel.ItimerProf, Value: w.itStart, Interval: w.itStart}))
	// Main loop: nanosleep(100 us); clock_gettime(); sched_yield().
	loop := []step{
		do(kernel.ClockNanosleep{Clock: sdk.ClockMonotonic, T: 100 * ktime.Microsecond}),
		do(kernel.ClockGettime{Clock: sdk.ClockMonotonic}),
		func(r kernel.Result) kernel.Action { timerCheck = r.Ret; return kernel.SchedYield{} },
	}
	prog := sequence(setup, loop)
	_, err := k.Spawn(p, "stress-ng-timermix", cpu, kernel.SchedOther, 0, prog)
	return err
}

func (w *timermix) Report(k *kernel.Kernel, end ktime.Time) Report {
	rep := Report{Type: "timermix", Name: w.name, Extra: map[string]any{}}
	elapsed := int64(end - w.warmup)
	stressMetrics(&rep, "timermix", w.instances, w.b.ops, elapsed, "Timermix")
	for _, c := range append(timermixClocksNames(), "ITIMER_REAL", "ITIMER_VIRTUAL", "ITIMER_PROF") {
		rate := perSecond(w.perClock[c], elapsed) / float64(w.instances)
		rep.Text = append(rep.Text, fmt.Sprintf("stress-ng: metrc: [1] timermix %-26s %14.2f ticks per sec", c, rate))
	}
	hangs := k.Counters.Total("hrtimer_hangs")
	maxDelay := int64(0)
	for _, s := range k.Counters.Samples() {
		if s.Name == "hrtimer_max_hang_delay_ns" && s.Value > maxDelay {
			maxDelay = s.Value
		}
	}
	rep.Bench[0].Metrics = append(rep.Bench[0].Metrics, Metric{"hrtimer-hangs", float64(hangs), "lower"})
	rep.Extra["hang_delay_max_ns"] = maxDelay
	return rep
}

func timermixClocksNames() []string {
	var n []string
	for _, c := range timermixClocks {
		n = append(n, c.name)
	}
	return n
}
