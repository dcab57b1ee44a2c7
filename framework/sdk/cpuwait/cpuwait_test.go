package cpuwait

import (
	"os"
	"testing"
	"time"
)

// TestJudge drives a judge of 4 s calls (probe 2 s, first tick at 2 s)
// with fake readings: each step is a tick at a wall time since the call
// started, the total run-queue wait the reader reports then, and what the
// judge must answer.
func TestJudge(t *testing.T) {
	const s, ms = time.Second, time.Millisecond
	type step struct {
		at      time.Duration // since the call started
		wait    time.Duration // the reader's total wait
		noStat  bool          // the reader cannot say
		stopped bool
		next    time.Duration // 0: failed
		starved time.Duration // Verdict.Starved
	}
	for _, c := range []struct {
		name  string
		steps []step
	}{
		{"hang on an idle machine fails at the deadline", []step{
			{at: 2 * s, wait: 10 * s, next: 2 * s},
			{at: 4 * s, wait: 10*s + 100*ms},
		}},
		{"a third of the probe waiting is not starvation", []step{
			{at: 2 * s, wait: 0, next: 2 * s},
			{at: 4 * s, wait: 666 * ms},
		}},
		{"a starved call is extended by a probe at a time", []step{
			{at: 2 * s, wait: 0, next: 2 * s},
			{at: 4 * s, wait: 1500 * ms, next: 2 * s},
			{at: 6 * s, wait: 3 * s, next: 2 * s},
			// The CPU came back and the call still did not answer.
			{at: 8 * s, wait: 3100 * ms, starved: 3 * s},
		}},
		{"several threads' waits beyond the wall time count once", []step{
			{at: 2 * s, wait: 0, next: 2 * s},
			{at: 4 * s, wait: 6 * s, next: 2 * s},
			{at: 6 * s, wait: 6 * s, starved: 2 * s},
		}},
		{"starvation cannot stretch a call beyond MaxStretch timeouts", []step{
			{at: 2 * s, wait: 0, next: 2 * s},
			{at: 4 * s, wait: 2 * s, next: 2 * s},
			{at: 46 * s, wait: 44 * s, next: 2 * s},
			{at: 48 * s, wait: 46 * s, starved: 46 * s},
		}},
		{"the last extension ends at the cap", []step{
			{at: 2 * s, wait: 0, next: 2 * s},
			{at: 47 * s, wait: 44 * s, next: 1 * s},
			{at: 48 * s, wait: 44500 * ms, starved: 44500 * ms},
		}},
		{"a stopped process fails at the deadline", []step{
			{at: 2 * s, wait: 0, next: 2 * s},
			{at: 4 * s, wait: 0, stopped: true},
		}},
		{"a stopped process fails even while starved", []step{
			{at: 2 * s, wait: 0, next: 2 * s},
			{at: 4 * s, wait: 2 * s, stopped: true},
		}},
		{"without schedstat the deadline is wall time", []step{
			{at: 2 * s, noStat: true, next: 2 * s},
			{at: 4 * s, noStat: true},
		}},
		{"schedstat lost after the baseline: wall time", []step{
			{at: 2 * s, wait: 0, next: 2 * s},
			{at: 4 * s, noStat: true},
		}},
		{"no baseline (schedstat came back): wall time", []step{
			{at: 2 * s, noStat: true, next: 2 * s},
			{at: 4 * s, wait: 5 * s},
		}},
		{"a first tick after the deadline measures a probe", []step{
			{at: 9 * s, wait: 0, next: 2 * s},
			{at: 11 * s, wait: 1800 * ms, next: 2 * s},
			{at: 13 * s, wait: 2 * s, starved: 1800 * ms},
		}},
		{"a first tick after the deadline: a stopped process fails", []step{
			{at: 9 * s, wait: 0, stopped: true},
		}},
		{"a first tick after the deadline without schedstat: wall time", []step{
			{at: 9 * s, noStat: true},
		}},
		{"a late first tick before the deadline measures from where it fired", []step{
			{at: 3900 * ms, wait: 0, next: 100 * ms},
			{at: 4 * s, wait: 90 * ms, next: 2 * s},
			{at: 6 * s, wait: 100 * ms, starved: 90 * ms},
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var cur step
			j := New(4*s, func() (Sample, bool) {
				return Sample{Wait: cur.wait, Stopped: cur.stopped}, !cur.noStat
			})
			if got := j.First(); got != 2*s {
				t.Fatalf("First() = %v, want 2s", got)
			}
			start := time.Unix(1000, 0)
			for i, st := range c.steps {
				cur = st
				v := j.Tick(1, start.Add(st.at), st.at)
				if v.Next != st.next || v.Failed() != (st.next == 0) {
					t.Fatalf("step %d (at %v): next %v, want %v", i, st.at, v.Next, st.next)
				}
				if v.Failed() && (v.Starved != st.starved || v.Stopped != st.stopped) {
					t.Fatalf("step %d (at %v): failed with starved %v stopped %v, want %v %v", i, st.at, v.Starved, v.Stopped, st.starved, st.stopped)
				}
			}
		})
	}
}

// TestJudgeNewCall: a call's baseline resets what an earlier call was
// granted.
func TestJudgeNewCall(t *testing.T) {
	wait := time.Duration(0)
	j := New(4*time.Second, func() (Sample, bool) { return Sample{Wait: wait}, true })
	t0 := time.Unix(0, 0)
	j.Tick(1, t0.Add(2*time.Second), 2*time.Second)
	wait = 2 * time.Second
	if v := j.Tick(1, t0.Add(4*time.Second), 4*time.Second); v.Failed() {
		t.Fatal("starved call failed")
	}
	// The call answered; the next one hangs on a quiet machine.
	t1 := t0.Add(10 * time.Second)
	j.Tick(2, t1.Add(2*time.Second), 2*time.Second)
	v := j.Tick(2, t1.Add(4*time.Second), 4*time.Second)
	if !v.Failed() || v.Starved != 0 {
		t.Fatalf("hang after a starved call: %+v", v)
	}
	// A third call whose first tick comes after its deadline (the owner's
	// timer was late) is measured for a probe, not judged on the second's
	// window.
	wait = 10 * time.Second
	t2 := t1.Add(10 * time.Second)
	if v := j.Tick(3, t2.Add(8*time.Second), 8*time.Second); v.Failed() || v.Next != 2*time.Second {
		t.Fatalf("late first tick of a new call: %+v, want a probe of 2s", v)
	}
}

func TestParse(t *testing.T) {
	for _, c := range []struct {
		in   string
		wait time.Duration
		ok   bool
	}{
		{"81428 3501835 2\n", 3501835, true},
		{"0 0 0", 0, true},
		{"81428\n", 0, false},
		{"1 x 2", 0, false},
		{"1 -5 2", 0, false},
		{"", 0, false},
	} {
		w, ok := ParseSchedstat([]byte(c.in))
		if w != c.wait || ok != c.ok {
			t.Errorf("ParseSchedstat(%q) = %v %v, want %v %v", c.in, w, ok, c.wait, c.ok)
		}
	}
	for _, c := range []struct {
		in    string
		state byte
		pgrp  int
		ok    bool
	}{
		{"42 (tickemu) S 1 42 42 0 -1", 'S', 42, true},
		{"43 (a b) c) T 1 42 42 0", 'T', 42, true},
		{"44 (x) t 1 7", 't', 7, true},
		{"45 (x) R 1", 0, 0, false},
		{"46 x R 1 2 3", 0, 0, false},
		{"47 (x) RR 1 2 3", 0, 0, false},
	} {
		state, pgrp, ok := statFields([]byte(c.in))
		if state != c.state || pgrp != c.pgrp || ok != c.ok {
			t.Errorf("statFields(%q) = %q %d %v, want %q %d %v", c.in, state, pgrp, ok, c.state, c.pgrp, c.ok)
		}
	}
}

// TestProcsSelf reads this process: running, so not stopped. Where the
// kernel has no schedstat (not Linux, or CONFIG_SCHED_INFO off) the reader
// must say it cannot tell, so that the deadline falls back to wall time.
func TestProcsSelf(t *testing.T) {
	if _, err := os.Stat("/proc/self/schedstat"); err != nil {
		if s, ok := Procs(true, os.Getpid())(); ok {
			t.Fatalf("no /proc/self/schedstat, yet Procs(self) = %+v, ok", s)
		}
		return
	}
	s, ok := Procs(true, os.Getpid())()
	if !ok || s.Stopped {
		t.Fatalf("Procs(self) = %+v, %v", s, ok)
	}
	if _, ok := Procs(false, 1<<30)(); ok {
		t.Error("a process that does not exist was read")
	}
}
