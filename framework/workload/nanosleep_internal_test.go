package workload

import (
	"reflect"
	"testing"

	"github.com/tickemu/tickemu/framework/kernel"
	"github.com/tickemu/tickemu/framework/sdk"
	"github.com/tickemu/tickemu/framework/sdk/ktime"
)

// TestNanosleepRound: the sleeps of one stress_nanosleep_pthread() round
// for each --nanosleep-method, on a machine with two idle states (residency
// 2 us and 600 us: sleeps of 3 us and 601 us) and on one without (cstate
// falls back to random). The random sleeps are 8 + rand(i) for i = 2^18 ..
// 1; rand here returns i - 1, the top of each range.
func TestNanosleepRound(t *testing.T) {
	var random []int64
	for i := int64(1) << 18; i > 0; i >>= 1 {
		random = append(random, 8+i-1)
	}
	cstates := []kernel.IdleState{{Name: "C1", ExitLatency: 2000, TargetResidency: 2000}, {Name: "C6", ExitLatency: 133000, TargetResidency: 600000}}
	cat := func(xs ...[]int64) []int64 {
		var out []int64
		for _, x := range xs {
			out = append(out, x...)
		}
		return out
	}
	for _, tc := range []struct {
		method string
		states []kernel.IdleState
		want   []int64
	}{
		{"random", cstates, random},
		{"cstate", cstates, []int64{3000, 601000}},
		{"cstate", nil, random},
		{"ns", nil, []int64{1}},
		{"us", nil, []int64{1000}},
		{"ms", nil, []int64{1000000}},
		{"all", cstates, cat([]int64{3000, 601000}, random, []int64{1, 1000, 1000000})},
		{"all", nil, random}, // stress-ng: no C states, random alone
	} {
		w := newOfType(t, "stress_ng_nanosleep", `method = "`+tc.method+`"`, kernel.Machine{CPUs: 2, HZ: 250, IdleStates: tc.states}).(*stressNgNanosleep)
		th := &nanosleepThread{w: w, m: &nanosleepMain{w: w}, rand: func(n int64) int64 { return n - 1 }}
		th.plan()
		if !reflect.DeepEqual(th.round, tc.want) {
			t.Errorf("method %s, %d idle states: round %v, want %v", tc.method, len(tc.states), th.round, tc.want)
		}
	}
}

// TestNanosleepThread drives one thread call by call: clock_gettime, the
// sleep, clock_gettime, for each sleep of a round, one bogo op per finished
// round, and the overrun (wakeup read less start read less the request).
func TestNanosleepThread(t *testing.T) {
	w := newOfType(t, "stress_ng_nanosleep", `method = "us"`, kernel.Machine{CPUs: 1, HZ: 250}).(*stressNgNanosleep)
	th := &nanosleepThread{w: w, m: &nanosleepMain{w: w}, rand: func(n int64) int64 { return 0 }}
	gettime := kernel.Action(kernel.ClockGettime{Clock: sdk.ClockMonotonic})
	now := ktime.Time(0)
	a := th.Next(nil, kernel.Result{})
	for round := 0; round < 3; round++ {
		if a != gettime {
			t.Fatalf("round %d: first action %#v, want clock_gettime(CLOCK_MONOTONIC)", round, a)
		}
		if s, ok := th.Next(nil, kernel.Result{Now: now, Ret: int64(now)}).(*kernel.ClockNanosleep); !ok || *s != (kernel.ClockNanosleep{Clock: sdk.ClockRealtime, T: 1000}) {
			t.Fatalf("round %d: second action %#v, want nanosleep(1 us) (clock_nanosleep(CLOCK_REALTIME, 0))", round, s)
		}
		now += 61000 // woken 61 us later: 60 us over the 1 us asked
		if a := th.Next(nil, kernel.Result{Now: now}); a != gettime {
			t.Fatalf("round %d: third action %#v, want clock_gettime", round, a)
		}
		if w.b.ops != int64(round) {
			t.Fatalf("round %d: %d bogo ops before the round ends, want %d", round, w.b.ops, round)
		}
		a = th.Next(nil, kernel.Result{Now: now, Ret: int64(now)})
	}
	if w.b.ops != 3 || w.sleeps != 3 || w.overrun != 3*60000 {
		t.Errorf("bogo ops %d, sleeps %d, overrun %d ns; want 3, 3, %d", w.b.ops, w.sleeps, w.overrun, 3*60000)
	}
}
