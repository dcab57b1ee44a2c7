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
//     glibc nanosleep()), summing the threads' counters.
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
	}},
	New: newStressNgNanosleep,
}

func newStressNgNanosleep(name string, c *sdk.ConfigReader, m kernel.Machine) (Workload, error) {
	w := &stressNgNanosleep{name: name, instances: int(c.Int("instances")), threads: int(c.Int("threads")), method: c.String("method")}
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
	w.b.warmup, w.warmup = warmup, warmup
	rng := k.Rand("stress_ng_nanosleep/" + w.name)
	main := kernel.ClockNanosleep{Clock: sdk.ClockRealtime, T: 10 * ktime.Millisecond}
	for i := 0; i < w.instances; i++ {
		p := k.NewProcess("stress-ng-nanosleep")
		if _, err := k.Spawn(p, "stress-ng-nanosleep", w.cpus[i%len(w.cpus)], kernel.SchedOther, 0,
			sequence(nil, []step{do(main)})); err != nil {
			return err
		}
		for j := 0; j < w.threads; j++ {
			th := &nanosleepThread{w: w, rand: rng.Int63n}
			cpu := w.cpus[(i*w.threads+j)%len(w.cpus)]
			if _, err := k.Spawn(p, "stress-ng-nanosleep", cpu, kernel.SchedOther, 0, th); err != nil {
				return err
			}
		}
	}
	return nil
}

// nanosleepThread is one stress_nanosleep_pthread() loop.
type nanosleepThread struct {
	w    *stressNgNanosleep
	rand func(int64) int64
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
		}
		th.plan()
	}
	th.step = 1
	return nanosleepGettime
}

func (w *stressNgNanosleep) Report(k *kernel.Kernel, end ktime.Time) Report {
	rep := Report{Type: "stress_ng_nanosleep", Name: w.name}
	stressMetrics(&rep, "nanosleep", w.instances, w.b.ops, int64(end-w.warmup), "StressNgNanosleep")
	over := avgOf(w.overrun, w.sleeps)
	rep.Text = append(rep.Text, fmt.Sprintf("stress-ng: metrc: [1] nanosleep %18.2f nanosec sleep overrun", over))
	rep.Bench[0].Metrics = append(rep.Bench[0].Metrics, Metric{"sleep-overrun-ns", over, "lower"})
	return rep
}
