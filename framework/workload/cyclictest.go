package workload

import (
	"fmt"
	"slices"

	"github.com/tickemu/tickemu/framework/kernel"
	"github.com/tickemu/tickemu/framework/metrics"
	"github.com/tickemu/tickemu/framework/sdk"
	"github.com/tickemu/tickemu/framework/sdk/ktime"
)

// cyclictest follows rt-tests src/cyclictest/cyclictest.c (v2.x; the loop is
// unchanged since the 3.10-era v0.85): thread i sleeps with
// clock_nanosleep(TIMER_ABSTIME) on CLOCK_MONOTONIC for interval + i*distance,
// reads the clock on wakeup, and records now - next in whole microseconds.
type cyclictest struct {
	// shutdown is set when a thread has done its loops (-l): cyclictest's
	// main loop then ends the run (its allstopped count, shutdown = 1,
	// and pthread_kill(SIGTERM) of the other threads), so every other
	// thread exits at its next wakeup instead of finishing its own loops.
	shutdown bool
	name     string
	threads  int
	cpus     []int
	interval int64
	distance int64
	prio     int
	clock    sdk.ClockID
	mode     string
	histMax  int
	nsecs    bool
	// distanceForced: -h set distance to 0 (the configured value, for the warning).
	distanceForced int64
	dmaLat         bool
	qos            int64
	userWork       int64
	loops          int64
	warmup         ktime.Time
	start          int64
	jitter         int64
	// idleStates: the machine has idle states, so wakeups can pay exit latency.
	idleStates bool
	stats      []*ctThread
	k          *kernel.Kernel
	// The loop's two fixed actions, boxed once.
	gettime, work kernel.Action
	// broke is the thread whose wakeup crossed --breaktrace, with its latency.
	broke      *ctThread
	breakValue int64
}

// ctThread is one measurement thread: its timerthread() loop (a
// kernel.Program of its own, so that a wakeup reads no closure object) and
// its statistics.
type ctThread struct {
	w *cyclictest
	// The loop's state (Next): its step, the thread's number (its
	// interval is interval + tid*distance), the next target.
	step int32
	tid  int32
	next int64
	// Sums over the measured wakeups of the part spent leaving idle.
	idleExit, broadcast int64
	// sleep is the clock_nanosleep() the loop rewrites and returns.
	sleep kernel.ClockNanosleep
	lat   metrics.Latency
	// worst explains the Max (kernel.WakePath of the slowest wakeup); set
	// with the first measured sample (lat.Count > 0) and rewritten in
	// place on each new Max.
	worst *kernel.WakePath
	start int64 // when the thread starts its loop
	pid   int
	cpu   int
	// cycles counts every wakeup, warm-up included (cyclictest's
	// stat->cycles, which -l ends the thread at).
	cycles int64
}

// interval is the thread's period (-i interval, -d distance).
func (st *ctThread) interval() int64 { return st.w.interval + int64(st.tid)*st.w.distance }

// cyclictestClockNames are cyclictest's clock values (-c 0, -c 1);
// cyclictestClocks the clocks they name, in the same order.
var (
	cyclictestClockNames = []string{"monotonic", "realtime"}
	cyclictestClocks     = []sdk.ClockID{sdk.ClockMonotonic, sdk.ClockRealtime}
)

// cyclictestType is the cyclictest workload type (listed in workload.go).
var cyclictestType = Type{
	Name: "cyclictest",
	Doc:  "rt-tests cyclictest: periodic clock_nanosleep wakeups, latency = wakeup - target",
	Schema: sdk.Schema{Attributes: []sdk.Attribute{
		count("threads", "1", "1", maxTasks, "number of measurement threads (-t)"),
		attr("cpus", sdk.TypeString, "", "cpulist the threads are pinned to round robin (-a); empty: thread i on CPU i"),
		attr("interval", sdk.TypeDuration, "1000us", "base interval (-i)"),
		attr("distance", sdk.TypeDuration, "500us", "interval increment per thread (-d)"),
		count("priority", "0", "0", "99", "SCHED_FIFO priority (-p); 0 = SCHED_OTHER"),
		count("loops", "0", "0", "1000000000", "wakeups per thread, after which the thread exits (-l); 0 = until the run ends"),
		attr("clock", sdk.TypeString, "monotonic", "clock (-c)", cyclictestClockNames...),
		attr("mode", sdk.TypeString, "clock_nanosleep", "sleep mode: absolute clock_nanosleep (default) or relative (-r)", "clock_nanosleep", "relative"),
		count("histogram", "0", "0", maxHistBuckets, "histogram buckets in us (-h); 0 = off. Forces distance to 0, as cyclictest does (the summary says so)"),
		attr("nsecs", sdk.TypeBool, "false", "print Min/Act/Avg/Max in ns instead of us (--nsecs)"),
		attr("dma_latency", sdk.TypeBool, "true", "hold a /dev/cpu_dma_latency request (cyclictest's default; off = --laptop)"),
		attr("latency", sdk.TypeDuration, "0s", "the PM QoS value written (--latency): idle states with a longer exit latency are not used"),
		attr("user_work", sdk.TypeDuration, "1us", "user-space work per loop (stats update, clock read)"),
		attr("start", sdk.TypeDuration, "0s", "when cyclictest is started (CLOCK_MONOTONIC since boot); the machine runs without it before"),
		attr("start_jitter", sdk.TypeDuration, "1ms", "each thread starts a seeded random 0..start_jitter after start, so seeds vary the phase against the tick and other timers"),
	}},
	New: newCyclictest,
}

// defaultHistBuckets is the latency histogram's size without -h (10 ms in
// 1 us buckets; longer samples count in its overflow).
const defaultHistBuckets = 10000

func newCyclictest(name string, c *sdk.ConfigReader, m kernel.Machine) (Workload, error) {
	w := &cyclictest{name: name, threads: int(c.Int("threads")), interval: c.Duration("interval"),
		distance: c.Duration("distance"), prio: int(c.Int("priority")), mode: c.String("mode"),
		histMax: int(c.Int("histogram")), nsecs: c.Bool("nsecs"), dmaLat: c.Bool("dma_latency"), qos: c.Duration("latency"), userWork: c.Duration("user_work"), loops: c.Int("loops"), start: c.Duration("start"), jitter: c.Duration("start_jitter"), idleStates: len(m.IdleStates) > 0}
	if w.threads < 1 {
		return nil, fieldErr("threads", "must be at least 1, got %d", w.threads)
	}
	if cells := w.threads * max(w.histMax, defaultHistBuckets); cells > maxHistogramCells {
		return nil, fieldErr("histogram", "%d threads with %d histogram buckets each make %d counters, more than the %d one block may keep", w.threads, max(w.histMax, defaultHistBuckets), cells, maxHistogramCells)
	}
	if w.interval <= 0 {
		return nil, fieldErr("interval", "must be positive")
	}
	if w.prio < 0 || w.prio > 99 {
		return nil, fieldErr("priority", "%d is outside 0..99", w.prio)
	}
	w.clock = cyclictestClocks[c.Enum("clock", cyclictestClockNames)]
	if c.String("cpus") != "" {
		w.cpus = c.CPUList("cpus", m.CPUs)
	} else {
		for i := 0; i < w.threads; i++ {
			w.cpus = append(w.cpus, i%m.CPUs)
		}
	}
	if w.histMax > 0 && w.distance != 0 {
		w.distanceForced = w.distance
		w.distance = 0 // cyclictest -h forces distance 0
	}
	return w, nil
}

func (w *cyclictest) Setup(k *kernel.Kernel, warmup ktime.Time) error {
	w.warmup = warmup
	if w.dmaLat {
		k.SetPMQoS(w.qos)
	}
	p := k.NewProcess("cyclictest")
	pol := kernel.SchedOther
	if w.prio > 0 {
		pol = kernel.SchedFIFO
	}
	buckets := w.histMax
	if buckets == 0 {
		buckets = defaultHistBuckets
	}
	k.RecordSpans()
	w.k = k
	w.gettime = kernel.ClockGettime{Clock: w.clock}
	w.work = kernel.Compute{NS: w.userWork}
	rng := k.Rand("cyclictest/" + w.name)
	for i := 0; i < w.threads; i++ {
		st := &ctThread{w: w, tid: int32(i), cpu: w.cpus[i%len(w.cpus)]}
		st.lat.Init(buckets)
		if w.jitter > 0 {
			st.start = w.start + rng.Int63n(w.jitter)
		}
		w.stats = append(w.stats, st)
		t, err := k.Spawn(p, "cyclictest", st.cpu, pol, w.prio, st)
		if err != nil {
			return err
		}
		st.pid = t.Pid
	}
	return nil
}

// Next is cyclictest's timerthread() loop (next: st.next; now: the last
// clock read, r.Ret). Its actions are boxed once (the sleep as a pointer
// the loop rewrites), so the loop allocates nothing.
func (st *ctThread) Next(t *kernel.Task, r kernel.Result) kernel.Action {
	w := st.w
	switch st.step {
	case 3: // clock_nanosleep returned: clock_gettime(&now)
		st.step = 4
		return w.gettime
	case 4: // diff = now - next; next += interval (skipping missed periods)
		now := r.Ret
		if r.Now >= w.warmup {
			// No sample yet (lat.Count == 0) is no worst case yet.
			if d := now - st.next; st.lat.Count == 0 || d > st.lat.Max {
				if st.worst == nil {
					st.worst = new(kernel.WakePath)
				}
				w.k.WakePath(st.worst, t, d)
			}
			if b := w.k.BreakThreshold(); b > 0 && now-st.next > b && w.broke == nil {
				// cyclictest -b: stop at the first wakeup over the threshold.
				w.broke = st
				w.breakValue = now - st.next
				// cyclictest's tracemark("hit latency threshold (%llu > %d)", diff, tracelimit), in us.
				w.k.TraceMark(r.Now, t, fmt.Sprintf("hit latency threshold (%d > %d)", (now-st.next)/1000, b/1000))
				w.k.Break(fmt.Sprintf("cyclictest %q thread %d: latency %d us, over %d us", w.name, st.tid, (now-st.next)/1000, b/1000))
			}
			st.lat.Add(now - st.next)
			ie, bc := t.WakeBreakdown()
			st.idleExit += ie
			st.broadcast += bc
		}
		iv := st.interval()
		st.next += iv
		for now > st.next {
			st.next += iv
		}
		// timerthread() leaves its loop when stat->cycles reaches
		// max_cycles (-l).
		if st.cycles++; w.loops > 0 && st.cycles >= w.loops || w.shutdown {
			w.shutdown = w.loops > 0
			return kernel.Exit{}
		}
		if w.userWork > 0 {
			// The statistics work first; the sleep after it (step 5) is
			// set now.
			st.step = 5
			w.sleep(&st.sleep, st.next, now+w.userWork)
			return w.work
		}
		st.step = 3
		return w.sleep(&st.sleep, st.next, now)
	case 5: // the statistics work is done: sleep again
		st.step = 3
		return &st.sleep
	case 0: // cyclictest is started later: wait for the start time
		st.step = 1
		if st.start > 0 {
			return kernel.ClockNanosleep{Clock: sdk.ClockMonotonic, Abs: true, T: st.start}
		}
		return w.gettime
	case 1: // clock_gettime(&now) before the loop
		st.step = 2
		return w.gettime
	default: // 2: next = now + interval; first sleep
		now := r.Ret
		st.next = now + st.interval()
		st.step = 3
		return w.sleep(&st.sleep, st.next, now)
	}
}

// sleep sets s to the loop's clock_nanosleep() until next (read at now)
// and returns it.
func (w *cyclictest) sleep(s *kernel.ClockNanosleep, next, now int64) kernel.Action {
	if w.mode == "relative" {
		d := next - now
		if d < 0 {
			d = 0
		}
		*s = kernel.ClockNanosleep{Clock: w.clock, T: d}
		return s
	}
	*s = kernel.ClockNanosleep{Clock: w.clock, Abs: true, T: next}
	return s
}

func (w *cyclictest) Report(k *kernel.Kernel, end ktime.Time) Report {
	rep := Report{Type: "cyclictest", Name: w.name, Extra: map[string]any{}}
	if w.distanceForced != 0 {
		rep.Text = append(rep.Text, fmt.Sprintf("# histogram = %d forces distance to 0 (it was %dus), as cyclictest -h does", w.histMax, w.distanceForced/1000))
	}
	unit := int64(1000) // cyclictest prints whole microseconds, or ns with --nsecs
	if w.nsecs {
		unit = 1
	}
	// The per-thread lists are allocated at their length (64 threads on a
	// big machine), not grown.
	rep.Bench = slices.Grow(rep.Bench, len(w.stats))
	for _, st := range w.stats {
		h := &st.lat
		rep.Text = append(rep.Text, fmt.Sprintf("T:%2d (%5d) P:%2d I:%d C:%7d Min:%7d Act:%5d Avg:%5d Max:%8d",
			st.tid, st.pid, w.prio, st.interval()/1000, h.Count, h.MinOrZero()/unit, h.Last/unit, int64(h.Avg())/unit, h.Max/unit))
		ms := append(make([]Metric, 0, 7),
			Metric{"max-latency-ns", float64(h.Max), "lower"},
			Metric{"avg-latency-ns", h.Avg(), "lower"},
			Metric{"min-latency-ns", float64(h.MinOrZero()), "lower"},
			// The -h histogram's p99 (whole-microsecond buckets, as
			// cyclictest prints it), in ns as the other latencies are,
			// so that benchstat scales them alike.
			Metric{"p99-latency-ns", float64(h.PercentileUS(0.99) * 1000), "lower"},
			Metric{"cycles", float64(h.Count), "higher"})
		if w.idleStates {
			// The latency breakdown exists only on machines with idle states.
			ms = append(ms, Metric{"avg-idle-exit-ns", avgOf(st.idleExit, h.Count), "lower"},
				Metric{"avg-broadcast-ns", avgOf(st.broadcast, h.Count), "lower"})
		}
		rep.Bench = append(rep.Bench, BenchLine{Name: "Cyclictest", Sub: fmt.Sprintf("thread=%d", st.tid), Metrics: ms})
		if st.idleExit+st.broadcast > 0 {
			rep.Text = append(rep.Text, fmt.Sprintf("#  T:%2d of the Avg: idle exit %.1f us, tick broadcast hand-off %.1f us",
				st.tid, avgOf(st.idleExit, h.Count)/1000, avgOf(st.broadcast, h.Count)/1000))
		}
	}
	hists := slices.Grow([]LatencyHist(nil), len(w.stats))
	for _, st := range w.stats {
		hists = append(hists, histOf(int(st.tid), &st.lat))
	}
	rep.Extra["latency_us"] = hists
	worst := slices.Grow([]WorstCase(nil), len(w.stats))
	for _, st := range w.stats {
		if st.worst == nil {
			continue
		}
		wc := WorstCase{Thread: int(st.tid), WakePath: *st.worst}
		worst = append(worst, wc)
		rep.Text = append(rep.Text, fmt.Sprintf("#  T:%2d %s", st.tid, wc.Line()))
	}
	if len(worst) > 0 {
		rep.Extra["worst"] = worst
	}
	if w.broke != nil {
		// cyclictest -b's closing lines.
		rep.Text = append(rep.Text, fmt.Sprintf("# Break thread: %d", w.broke.pid), fmt.Sprintf("# Break value: %d", w.breakValue/unit))
		rep.Extra["break"] = map[string]int64{"thread": int64(w.broke.tid), "pid": int64(w.broke.pid), "latency_ns": w.breakValue}
	}
	if w.histMax > 0 {
		rep.Text = append(rep.Text, w.histogram()...)
	}
	return rep
}

// histogram prints cyclictest -h output: "# Histogram", one line per bucket
// with one column per thread, then the summary lines.
func (w *cyclictest) histogram() []string {
	out := []string{"# Histogram"}
	for b := 0; b < w.histMax; b++ {
		line := fmt.Sprintf("%06d", b)
		any := false
		for _, st := range w.stats {
			n := st.lat.Bucket(b)
			line += fmt.Sprintf(" %06d", n)
			if n != 0 {
				any = true
			}
		}
		if any {
			out = append(out, line)
		}
	}
	sum := func(label string, f func(*ctThread) int64) string {
		s := "# " + label + ":"
		for _, st := range w.stats {
			s += fmt.Sprintf(" %05d", f(st))
		}
		return s
	}
	out = append(out,
		sum("Total", func(st *ctThread) int64 { return st.lat.Count }),
		sum("Min Latencies", func(st *ctThread) int64 { return st.lat.MinOrZero() / 1000 }),
		sum("Avg Latencies", func(st *ctThread) int64 { return int64(st.lat.Avg()) / 1000 }),
		sum("Max Latencies", func(st *ctThread) int64 { return st.lat.Max / 1000 }),
		sum("Histogram Overflows", func(st *ctThread) int64 { return st.lat.Overflow() }))
	return out
}

func avgOf(sum, n int64) float64 {
	if n == 0 {
		return 0
	}
	return float64(sum) / float64(n)
}
