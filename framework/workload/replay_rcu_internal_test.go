package workload

import (
	"testing"

	"github.com/tickemu/tickemu/framework/replay"
	"github.com/tickemu/tickemu/framework/traceimport"
)

// TestReplayRCUGPWindows: with the RCU grace-period kthread's waits in the
// capture (HZ 1000), a wait that does not follow its own expiry at once
// begins a grace period, and an RCU_SOFTIRQ is read as callbacks only
// outside the grace periods and the ticks right after them (rcuNoticeTicks),
// where it is the grace period's own work. A capture without the waits
// reads every raise as callbacks.
func TestReplayRCUGPWindows(t *testing.T) {
	const ms = 1_000_000
	const gp = 0xffffc90000077d80
	start := func(at int64, comm string) *traceimport.Event {
		return &traceimport.Event{Kind: traceimport.TimerStart, Time: at, CPU: 0, Comm: comm, Timer: gp, Function: "process_timeout"}
	}
	expire := func(at int64) *traceimport.Event {
		return &traceimport.Event{Kind: traceimport.TimerExpireEntry, Time: at, CPU: 0, Comm: "<idle>", Timer: gp, Function: "process_timeout"}
	}
	cancel := func(at int64) *traceimport.Event {
		return &traceimport.Event{Kind: traceimport.TimerCancel, Time: at, CPU: 0, Comm: "rcu_preempt", Timer: gp}
	}
	raise := func(at int64, cpu int) *traceimport.Event {
		return &traceimport.Event{Kind: traceimport.SoftirqRaise, Time: at, CPU: cpu, Vec: 9}
	}
	events := []*traceimport.Event{
		raise(1*ms, 1),                    // before any grace period: callbacks
		start(2*ms, "rcu_preempt"),        // a grace period begins
		raise(3*ms, 1),                    // during it: its work
		expire(5 * ms),                    // the first scan
		start(5*ms+50_000, "rcu_preempt"), // waits again: the same grace period
		cancel(6 * ms),                    // it ended before the second scan
		raise(7*ms, 1),                    // CPU 1 notices the end
		raise(9*ms, 1),                    // callbacks again
		expire(20 * ms),                   // (a stray expiry of the pointer)
		start(40*ms, "rcu_preempt"),       // long after: a new grace period
		start(50*ms, "kworker/0:1"),       // the pointer is another task's timer now
		raise(50*ms+1, 0),
	}
	want := []struct {
		at   int64
		kind rcuWork
	}{{1 * ms, rcuSoftirq}, {2 * ms, rcuGPBegin}, {9 * ms, rcuSoftirq}, {40 * ms, rcuGPBegin}, {50*ms + 1, rcuSoftirq}}
	run := func(timers map[uint64]bool) []item {
		w := &replayLoad{rcuOn: true, cap: &replay.Capture{HZ: 1000, RCUGPTimers: timers}}
		w.rcuGP, w.rcuWaitDone, w.running = map[uint64]bool{}, map[uint64]bool{}, replay.Running{}
		w.rcuGPQueued, w.rcuGPWoke = map[uint64]bool{}, -1<<62
		for _, e := range events {
			w.rcuGPEvent(e)
			w.rcuWork(e)
		}
		if w.rcuGP[gp] {
			t.Errorf("the pointer is still the kthread's after kworker/0:1 started it")
		}
		return w.queue
	}
	got := run(map[uint64]bool{gp: true})
	if len(got) != len(want) {
		t.Fatalf("queued %d RCU items, want %d: %+v", len(got), len(want), got)
	}
	for i, it := range got {
		if it.op.Time != want[i].at || it.rcu != want[i].kind {
			t.Errorf("item %d: at %d kind %d, want at %d kind %d", i, it.op.Time, it.rcu, want[i].at, want[i].kind)
		}
	}
	// Without the kthread's waits in the capture every raise is callbacks.
	n := 0
	for _, it := range run(nil) {
		if it.rcu == rcuSoftirq {
			n++
		}
	}
	if n != 5 {
		t.Errorf("without the kthread's waits: %d raises read as callbacks, want all 5", n)
	}
}
