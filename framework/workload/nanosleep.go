package workload

import (
	"fmt"

	"github.com/tickemu/tickemu/framework/kernel"
	"github.com/tickemu/tickemu/framework/sdk"
	"github.com/tickemu/tickemu/framework/sdk/ktime"
)

// stressNgNanosleep is stress-ng --nanosleep (stress-nanosleep.c), one
// process per instance:
//
//   - threads pthreads (--nanosleep-threads, default 8), each looping
//     (stress_nanosleep_pthread(); stress_pthread_func() before V0.17.00):
//     one bogo op is one round of sleeps, each sleep clock_gettime(
//     CLOCK_MONOTONIC), nanosleep() (glibc: clock_nanosleep(CLOCK_REALTIME,
//     0)) and clock_gettime again, the difference less the requested time
//     summed as the sleep's overrun. A round's sleeps, by --nanosleep-method
//     (V0.17.00; before it every round was "random"):
//     cstate: (residency + 1) us for each cpuidle state with a non-zero
//     target residency (stress_cpuidle_cstate_list_head(); a machine
//     without idle states falls back to random alone, as stress-ng does
//     for an empty list);
//     random: 19 sleeps of 8 + (random & (i - 1)) ns for i = 2^18, 2^17,
//     ..., 1 (stress_mwc32modn(i) before V0.17.00: the same range);
//     ns, us, ms: one sleep of 1 ns, 1 us, 1 ms; all: each of them in that
//     order.
//   - the main thread: usleep(10 ms) in a loop (shim_usleep_interruptible(),
//     glibc nanosleep()), summing the threads' counters into the bogo
//     counter, while keep_stressing() (the sum under max_ops); then
//     thread_terminate, pthread_join() of every thread, and a 10000-loop
//     of clock_gettime() pairs measuring their overhead.
//   - with --nanosleep-ops N (V0.15.06): the instance's max_ops is
//     ceil(N / instances) (stress-ng.c), each thread's max_ops / threads + 1
//     rounds (stress_nanosleep()); a thread stops at the top of its loop
//     when its own count or the published sum reaches its limit, or on
//     thread_terminate.
//   - around the stressor, the instance's process (stress_run() in
//     stress-ng.c): alarm(g_opt_timeout), stats->start, usleep(0), the
//     stressor, alarm(0), stats->finish; bogo ops/s is the bogo counter
//     over finish - start (stress_metrics_dump()). The model spawns the
//     threads with the process rather than after its usleep(0).
//
// The threads are SCHED_OTHER, so every sleep has the default 50 us timer
// slack: the slack, not the requested nanoseconds, sets the rate. Threads are
// placed round robin on cpus (the kernel's load balancer spreads the real
// ones; the model pins them). One bogo op is one finished round; stress-ng
// samples the counters every 10 ms, which the model does not. Checked
// against V0.15.06 (Debian 12) and 2026's master.
type stressNgNanosleep struct {
	name      string
	instances int
	threads   int
	method    string
	cpus      []int
	// cstate is the sleeps of the cstate method: (residency + 1) us per
	// idle state with a residency.
	cstate  []int64
	b       bogo
	overrun int64 // summed over the measured sleeps, ns
	sleeps  int64
	warmup  ktime.Time
	// maxOps is each instance's max_ops (0: no limit), alarm its
	// alarm(g_opt_timeout).
	maxOps uint64
	alarm  uint32
	inst   []*nanosleepMain
}

// nanosleepMethods are --nanosleep-method's values, each the sleeps its
// round holds.
var nanosleepMethods = []string{"random", "all", "cstate", "ns", "us", "ms"}

// stressNgNanosleepType is the stress_ng_nanosleep workload type (listed in workload.go).
var stressNgNanosleepType = Type{
	Name: "stress_ng_nanosleep",
	Doc:  "stress-ng --nanosleep: per instance 8 threads of short nanosleep()s (random 8 ns..262 us, C-state residencies, 1 ns, 1 us, 1 ms)",
	Schema: sdk.Schema{Attributes: []sdk.Attribute{
		count("instances", "1", "1", maxTasks, "instances (--nanosleep N), one process each"),
		count("threads", "8", "1", "1024", "pthreads per instance (--nanosleep-threads, 1..1024)"),
		attr("method", sdk.TypeString, "random", "the sleeps of one bogo op (--nanosleep-method, V0.17.00+; its default there is all): random is the only behaviour of earlier versions (Debian 12's 0.15.06)", nanosleepMethods...),
		attr("cpus", sdk.TypeString, "", "cpulist the threads are placed on, round robin over every instance's threads (the main thread of instance i on the i-th); empty: every CPU"),
		count("ops", "0", "0", "1000000000000", "bogo ops of all instances (--nanosleep-ops N): each instance stops at ceil(N / instances), each thread after max_ops / threads + 1 rounds; 0: no limit"),
		attr("alarm", sdk.TypeDuration, "86400s", "the instance's alarm(g_opt_timeout): -t, or stress-ng's default of a day"),
	}},
	New: newStressNgNanosleep,
}

func newStressNgNanosleep(name string, c *sdk.ConfigReader, m kernel.Machine) (Workload, error) {
	w := &stressNgNanosleep{name: name, instances: int(c.Int("instances")), threads: int(c.Int("threads")), method: c.String("method")}
	if ops := c.Int("ops"); ops > 0 && w.instances > 0 {
		w.maxOps = uint64((ops + int64(w.instances) - 1) / int64(w.instances))
	}
	var err error
	if w.alarm, err = alarmSeconds(c); err != nil {
		return nil, err
	}
	if w.threads < 1 {
		return nil, fieldErr("threads", "must be at least 1, got %d", w.threads)
	}
	if n := w.instances * (w.threads + 1); n > maxChildren {
		return nil, fieldErr("threads", "%d instances of %d threads make %d tasks, more than the %d one block may start", w.instances, w.threads, n, maxChildren)
	}
	w.cpus = c.CPUList("cpus", m.CPUs) // "": every CPU
	for _, s := range m.IdleStates {
		// stress-ng reads the residency in whole us from sysfs.
		if us := s.TargetResidency / 1000; us > 0 {
			w.cstate = append(w.cstate, (us+1)*1000)
		}
	}
	return w, nil
}

func (w *stressNgNanosleep) Setup(k *kernel.Kernel, warmup ktime.Time) error {
	if w.maxOps > 0 && warmup > 0 {
		return fieldErr("ops", "stress-ng counts an instance's bogo ops from its start: ops and a run warmup do not go together")
	}
	w.b.warmup, w.warmup = warmup, warmup
	rng := k.Rand("stress_ng_nanosleep/" + w.name)
	for i := 0; i < w.instances; i++ {
		p := k.NewProcess("stress-ng-nanosleep")
		m := &nanosleepMain{w: w, alive: w.threads}
		w.inst = append(w.inst, m)
		if _, err := k.Spawn(p, "stress-ng-nanosleep", w.cpus[i%len(w.cpus)], kernel.SchedOther, 0, m); err != nil {
			return err
		}
		for j := 0; j < w.threads; j++ {
			th := &nanosleepThread{w: w, m: m, rand: rng.Int63n}
			m.threads = append(m.threads, th)
			cpu := w.cpus[(i*w.threads+j)%len(w.cpus)]
			if _, err := k.Spawn(p, "stress-ng-nanosleep", cpu, kernel.SchedOther, 0, th); err != nil {
				return err
			}
		}
	}
	return nil
}

// nanosleepMain is one instance's main thread: stress_run()'s alarm and
// usleep(0), stress_nanosleep()'s counting loop, the join and the overhead
// loop, alarm(0), exit.
type nanosleepMain struct {
	w       *stressNgNanosleep
	threads []*nanosleepThread
	task    *kernel.Task
	phase   int
	// sum is the bogo counter the main loop last published
	// (set_counter(0) and add_counter() of every thread's count).
	sum uint64
	// terminate is thread_terminate; alive counts the threads not yet
	// exited, joining whether the main thread waits in pthread_join().
	terminate, joining bool
	alive              int
	gettimes           int
	start, finish      ktime.Time
	finished           bool
}

// nanosleepOverheadLoops is stress_nanosleep()'s benchmark_loops: the
// clock_gettime() pairs timed after the join.
const nanosleepOverheadLoops = 10000

func (m *nanosleepMain) Next(t *kernel.Task, r kernel.Result) kernel.Action {
	w := m.w
	if m.task == nil {
		m.task = t
	}
	switch m.phase {
	case 0:
		m.phase = 1
		return kernel.Alarm{Seconds: w.alarm}
	case 1:
		m.start = r.Now // stats->start, before shim_usleep()
		m.phase = 2
		return kernel.ClockNanosleep{Clock: sdk.ClockRealtime, T: 0}
	case 2:
		m.phase = 3
		return nanosleepMainSleep
	case 3:
		// After the 10 ms sleep: the counter is the threads' sum, and the
		// do-while tests keep_stressing().
		m.sum = 0
		for _, th := range m.threads {
			m.sum += th.counter
		}
		if w.maxOps == 0 || m.sum < w.maxOps {
			return nanosleepMainSleep
		}
		m.terminate = true
		m.phase = 4
		if m.alive > 0 {
			m.joining = true
			return kernel.Wait{Name: "futex"} // pthread_join()
		}
		fallthrough
	case 4:
		m.joining = false
		if m.gettimes < 2*nanosleepOverheadLoops {
			m.gettimes++
			return nanosleepGettime
		}
		m.phase = 5
		return kernel.Alarm{} // alarm(0)
	}
	if !m.finished {
		m.finish, m.finished = r.Now, true // stats->finish
	}
	return kernel.Exit{}
}

// nanosleepMainSleep is the main loop's shim_usleep_interruptible(10000).
var nanosleepMainSleep kernel.Action = kernel.ClockNanosleep{Clock: sdk.ClockRealtime, T: 10 * ktime.Millisecond}

// nanosleepThread is one stress_nanosleep_pthread() loop.
type nanosleepThread struct {
	w    *stressNgNanosleep
	m    *nanosleepMain
	rand func(int64) int64
	// counter is ctxt->counter, the rounds done.
	counter uint64
	// round holds the current round's sleeps, i the one in progress.
	round []int64
	i     int
	step  int
	t1    int64
	sleep kernel.ClockNanosleep
}

var nanosleepGettime kernel.Action = kernel.ClockGettime{Clock: sdk.ClockMonotonic}

// plan fills the next round's sleeps (stress_nanosleep_pthread()'s loop
// body).
func (th *nanosleepThread) plan() {
	w := th.w
	th.round, th.i = th.round[:0], 0
	m := w.method
	if (m == "cstate" || m == "all") && len(w.cstate) == 0 {
		m = "random" // no C states: "using random nanosleeps instead"
	}
	if m == "cstate" || m == "all" {
		th.round = append(th.round, w.cstate...)
	}
	if m == "random" || m == "all" {
		for i := int64(1) << 18; i > 0; i >>= 1 {
			th.round = append(th.round, 8+th.rand(i))
		}
	}
	if m == "ns" || m == "all" {
		th.round = append(th.round, 1)
	}
	if m == "us" || m == "all" {
		th.round = append(th.round, 1000)
	}
	if m == "ms" || m == "all" {
		th.round = append(th.round, 1000000)
	}
}

func (th *nanosleepThread) Next(t *kernel.Task, r kernel.Result) kernel.Action {
	w := th.w
	switch th.step {
	case 1: // t1 read: sleep
		th.t1 = r.Ret
		th.step = 2
		th.sleep = kernel.ClockNanosleep{Clock: sdk.ClockRealtime, T: th.round[th.i]}
		return &th.sleep
	case 2: // woken: read t2
		th.step = 3
		return nanosleepGettime
	case 3: // t2 read: the overrun, then the next sleep
		if r.Now >= w.warmup {
			w.overrun += r.Ret - th.t1 - th.round[th.i]
			w.sleeps++
		}
		th.i++
	}
	if th.i >= len(th.round) {
		if th.round != nil {
			w.b.inc(r.Now) // ctxt->counter++ after a round
			th.counter++
		}
		if th.stop() {
			// The loop's condition failed: the thread returns and exits;
			// the last one ends the main thread's pthread_join().
			th.m.alive--
			if th.m.alive == 0 && th.m.joining {
				t.Kernel().Wake(r.Now, th.m.task, t.CPU())
			}
			return kernel.Exit{}
		}
		th.plan()
	}
	th.step = 1
	return nanosleepGettime
}

// stop is the negation of stress_pthread_func()'s loop condition:
// keep_stressing(args) (the published sum under max_ops), !thread_terminate
// and the thread's own count under its limit.
func (th *nanosleepThread) stop() bool {
	w, m := th.w, th.m
	if m.terminate {
		return true
	}
	if w.maxOps == 0 {
		return false
	}
	return m.sum >= w.maxOps || th.counter >= w.maxOps/uint64(w.threads)+1
}

func (w *stressNgNanosleep) Report(k *kernel.Kernel, end ktime.Time) Report {
	rep := Report{Type: "stress_ng_nanosleep", Name: w.name}
	ops, elapsed := w.b.ops, int64(end-w.warmup)
	if w.maxOps > 0 {
		// stress_metrics_dump(): the bogo counters (each the sum its main
		// loop last published) over the mean finish - start.
		ops, elapsed = 0, 0
		for _, m := range w.inst {
			ops += int64(m.sum)
			f := end
			if m.finished {
				f = m.finish
			}
			elapsed += int64(f - m.start)
		}
		elapsed /= int64(max(len(w.inst), 1))
	}
	stressMetrics(&rep, "nanosleep", w.instances, ops, elapsed, "StressNgNanosleep")
	over := avgOf(w.overrun, w.sleeps)
	rep.Text = append(rep.Text, fmt.Sprintf("stress-ng: metrc: [1] nanosleep %18.2f nanosec sleep overrun", over))
	rep.Bench[0].Metrics = append(rep.Bench[0].Metrics, Metric{"sleep-overrun-ns", over, "lower"})
	return rep
}
