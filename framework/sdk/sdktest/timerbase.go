package sdktest

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/tickemu/tickemu/framework/sdk"
	"github.com/tickemu/tickemu/framework/sdk/ktime"
)

// tbHZs are the tick rates the TimerBase suite runs at: HZ=1000 and the
// HZ<=100 geometry (a shallower new wheel).
var tbHZs = []int{1000, 100}

// tbCPUs is the machine size of the TimerBase suite.
const tbCPUs = 2

// RunTimerBase runs the conformance suite for a sdk.TimerBase. newPlugin
// returns a fresh, unconfigured plugin each time it is called; the suite
// configures it with its schema's defaults (in the host's canonical form) for
// a 2-CPU machine at HZ 1000 and HZ 100, and starts jiffies at
// INITIAL_JIFFIES.
//
// It checks: Info and the schema are well formed; ModTimer/DelTimer report
// WasPending as mod_timer()/del_timer() return it and keep State.Pending; a
// timer never expires before its expiry (neither the softirq's jiffies nor
// the collected Jiffy), expires exactly once, on its CPU, and not absurdly
// late (at most a quarter of its delay plus two jiffies); no non-deferrable
// timer expires before State.NextExpiry, and one does at it;
// NextTimerInterrupt agrees with State.NextExpiry; deferrable timers never
// appear in NextExpiry but still run; a declared Period re-arms the timer
// from the softirq's jiffies; offsets and costs are ordered and never
// negative; Counters are stable; two fresh instances given the same calls
// answer identically; a plugin with sdk.InPlaceNextTimer answers in place
// what NextTimerInterrupt answers (every field written); a plugin that
// promises sdk.RepeatFreeNextTimer answers each repeat as the call before at
// cost 0 and answers everything after as without the repeats; a plugin that declares sdk.NextTimerModel answers
// every NextTimerInterrupt its model covers as the model says; and, on a
// 4-CPU machine with kernel.timer_migration on
// and a nohz_full CPU, timers are placed as the kernel may place them
// (tbCheckPlacement: pinned and busy-CPU timers stay, moved ones go to a busy
// housekeeping CPU, each expires once where ModTimer said, split bases
// expire remotely only their global timers).
func RunTimerBase(t *testing.T, newPlugin func(t *testing.T) sdk.TimerBase) {
	t.Helper()
	t.Run("Info", func(t *testing.T) {
		i := newPlugin(t).Info()
		if i.Kind != sdk.KindTimerBase || i.Name == "" || i.Version == "" || i.Description == "" {
			t.Errorf("Info() = %+v, want kind %q, a name, version and description", i, sdk.KindTimerBase)
		}
	})
	t.Run("Schema", func(t *testing.T) { checkSchema(t, newPlugin(t).Schema()) })
	t.Run("Placement", func(t *testing.T) { tbCheckPlacement(t, newPlugin) })
	for _, hz := range tbHZs {
		t.Run(fmt.Sprintf("HZ=%d", hz), func(t *testing.T) {
			fresh := func(t *testing.T) sdk.TimerBase { return tbFresh(t, newPlugin, hz) }
			j0 := ktime.InitialJiffies(hz)
			t.Run("AddDelMod", func(t *testing.T) { tbCheckAddDelMod(t, fresh(t), j0) })
			t.Run("NeverEarly", func(t *testing.T) { tbCheckNeverEarly(t, fresh(t), j0) })
			t.Run("NextExpiry", func(t *testing.T) { tbCheckNextExpiry(t, fresh(t), j0) })
			t.Run("Deferrable", func(t *testing.T) { tbCheckDeferrable(t, fresh(t), j0) })
			t.Run("Period", func(t *testing.T) { tbCheckPeriod(t, fresh(t), j0) })
			t.Run("PerCPU", func(t *testing.T) { tbCheckPerCPU(t, fresh(t), j0) })
			t.Run("Model", func(t *testing.T) {
				for seed := uint64(1); seed <= 3; seed++ {
					tbCheckModel(t, fresh(t), j0, seed)
				}
			})
			t.Run("NoMigration", func(t *testing.T) { tbCheckNoMigration(t, fresh(t), j0) })
			t.Run("Deterministic", func(t *testing.T) {
				a := tbScript(t, fresh(t), j0)
				b := tbScript(t, fresh(t), j0)
				if !reflect.DeepEqual(a, b) {
					t.Errorf("two fresh instances answered differently:\n%v\n%v", a, b)
				}
			})
			t.Run("InPlace", func(t *testing.T) {
				p := fresh(t)
				ip, ok := p.(sdk.InPlaceNextTimer)
				if !ok {
					return // no in-place call: nothing to check
				}
				a := tbScript(t, fresh(t), j0)
				b := tbScript(t, inPlaceAsked{p, ip}, j0)
				if !reflect.DeepEqual(a, b) {
					t.Errorf("NextTimerInterruptInto answered otherwise than NextTimerInterrupt:\n%v\n%v", b, a)
				}
			})
			t.Run("RepeatFree", func(t *testing.T) {
				p := fresh(t)
				if rf, ok := p.(sdk.RepeatFreeNextTimer); !ok || !rf.NextTimerRepeatFree() {
					return // no promise: nothing to check
				}
				a := tbScript(t, fresh(t), j0)
				b := tbScript(t, repeatAsked{p, t}, j0)
				if !reflect.DeepEqual(a, b) {
					t.Errorf("after repeated NextTimerInterrupt calls the plugin answered otherwise:\n%v\n%v", b, a)
				}
			})
			t.Run("Counters", func(t *testing.T) {
				p := fresh(t)
				tbScript(t, p, j0)
				a, b := p.Counters(), p.Counters()
				if !reflect.DeepEqual(a, b) {
					t.Errorf("Counters() not stable: %v then %v", a, b)
				}
				for _, c := range a {
					if c.Name == "" || c.CPU < -1 || c.CPU >= tbCPUs || c.Value < 0 {
						t.Errorf("counter %+v: want a name, CPU in [-1, %d) and a value >= 0", c, tbCPUs)
					}
				}
			})
		})
	}
}

// tbFresh returns a plugin configured with its schema defaults.
func tbFresh(t *testing.T, newPlugin func(*testing.T) sdk.TimerBase, hz int) sdk.TimerBase {
	t.Helper()
	p := newPlugin(t)
	cfg := mustDefaults(t, p.Schema())
	if d := p.Configure(sdk.Setup{CPUs: tbCPUs, HZ: hz, HighRes: true, Seed: 1}, cfg); d.HasErrors() {
		t.Fatalf("Configure(defaults) = %v", d)
	}
	return p
}

// tbOp checks a ModTimer/DelTimer result.
func tbOp(t *testing.T, call string, r sdk.WheelOpResult, wasPending bool, pending int) {
	t.Helper()
	if r.WasPending != wasPending || r.State.Pending != pending || r.Cost < 0 {
		t.Errorf("%s = {WasPending: %v, Pending: %d, Cost: %d}, want {%v, %d, >= 0}",
			call, r.WasPending, r.State.Pending, r.Cost, wasPending, pending)
	}
}

func tbCheckAddDelMod(t *testing.T, p sdk.TimerBase, j0 uint64) {
	tm := sdk.WheelTimer{ID: 1, Expires: j0 + 100}
	tbOp(t, "ModTimer(new)", p.ModTimer(0, j0, tm), false, 1)
	tm.Expires = j0 + 5000
	tbOp(t, "ModTimer(pending, later)", p.ModTimer(0, j0, tm), true, 1)
	tbOp(t, "ModTimer(pending, same)", p.ModTimer(0, j0, tm), true, 1)
	tm.Expires = j0 + 10
	tbOp(t, "ModTimer(pending, earlier)", p.ModTimer(0, j0, tm), true, 1)
	tbOp(t, "ModTimer(second)", p.ModTimer(0, j0, sdk.WheelTimer{ID: 2, Expires: j0 + 50}), false, 2)
	r := p.DelTimer(0, j0, 1)
	tbOp(t, "DelTimer(pending)", r, true, 1)
	tbOp(t, "DelTimer(deleted)", p.DelTimer(0, j0, 1), false, 1)
	tbOp(t, "DelTimer(unknown)", p.DelTimer(0, j0, 99), false, 1)
	tbOp(t, "DelTimer(second)", p.DelTimer(0, j0, 2), true, 0)
	if r := p.DelTimer(0, j0, 2); r.State.NextExpiry != sdk.NoExpiry {
		t.Errorf("empty base: State.NextExpiry = %d, want NoExpiry", r.State.NextExpiry)
	}
	for j := j0 + 1; j <= j0+6000; j++ {
		if r := p.RunTimers(0, j); len(r.Expired) != 0 {
			t.Fatalf("RunTimers(0, %d) expired %+v after every timer was deleted", j, r.Expired)
		}
	}
	// Re-adding a deleted ID starts a new timer.
	tbOp(t, "ModTimer(re-add)", p.ModTimer(0, j0+6000, sdk.WheelTimer{ID: 1, Expires: j0 + 6010}), false, 1)
}

// tbRun calls RunTimers and checks what any softirq pass must satisfy.
func tbRun(t *testing.T, p sdk.TimerBase, cpu int, j uint64) sdk.RunTimersResult {
	t.Helper()
	r := p.RunTimers(cpu, j)
	last := int64(0)
	for _, e := range r.Expired {
		if e.Offset < last || e.Offset > r.Cost {
			t.Fatalf("RunTimers(%d, %d): offsets %+v not ordered within cost %d", cpu, j, r.Expired, r.Cost)
		}
		last = e.Offset
		if e.Jiffy > j {
			t.Fatalf("RunTimers(%d, %d): timer %d collected at jiffy %d, after jiffies", cpu, j, e.ID, e.Jiffy)
		}
	}
	if r.Cost < 0 {
		t.Fatalf("RunTimers(%d, %d).Cost = %d, want >= 0", cpu, j, r.Cost)
	}
	return r
}

// tbDeltas are expiry distances around the levels' and vectors' boundaries.
var tbDeltas = []uint64{0, 1, 2, 7, 8, 62, 63, 64, 100, 255, 256, 257, 503, 504, 1000, 4031, 4032, 16383, 16384, 40000}

func tbCheckNeverEarly(t *testing.T, p sdk.TimerBase, j0 uint64) {
	type armed struct {
		cpu     int
		expires uint64
	}
	want := map[sdk.TimerID]armed{}
	id := sdk.TimerID(0)
	for cpu := 0; cpu < tbCPUs; cpu++ {
		for k, d := range tbDeltas {
			id++
			at := j0 + uint64(k) // arm at a few different jiffies
			want[id] = armed{cpu, at + d}
			p.ModTimer(cpu, at, sdk.WheelTimer{ID: id, Expires: at + d, CallbackCost: 100})
		}
	}
	end := j0 + 50000
	// Visit every jiffy where some CPU reports its next expiry (so a timer
	// firing before its expires, or before the reported NextExpiry, is seen),
	// and at least every 97 jiffies (so a late or never-firing timer is too),
	// instead of every jiffy: the suite also runs over gRPC.
	next := make([]uint64, tbCPUs)
	for j := j0 + uint64(len(tbDeltas)); j <= end && len(want) > 0; j = tbStep(j, next) {
		for cpu := 0; cpu < tbCPUs; cpu++ {
			r := tbRun(t, p, cpu, j)
			next[cpu] = r.State.NextExpiry
			for _, e := range r.Expired {
				a, ok := want[e.ID]
				switch {
				case !ok:
					t.Errorf("RunTimers(%d, %d): timer %d expired twice or was never armed", cpu, j, e.ID)
				case a.cpu != cpu:
					t.Errorf("RunTimers(%d, %d): timer %d armed on CPU %d", cpu, j, e.ID, a.cpu)
				case j < a.expires || e.Jiffy < a.expires:
					t.Errorf("RunTimers(%d, %d): timer %d (expires %d) expired early, at jiffy %d",
						cpu, j, e.ID, a.expires, e.Jiffy)
				}
				delete(want, e.ID)
			}
		}
		for tid, a := range want {
			d := a.expires - j0
			if j > a.expires+d/4+2+uint64(len(tbDeltas)) {
				t.Errorf("timer %d (expires j0+%d) still pending at j0+%d", tid, d, j-j0)
				delete(want, tid)
			}
		}
	}
	if len(want) > 0 {
		t.Errorf("%d timers never expired", len(want))
	}
}

// tbStep returns the next jiffy to visit after j: the earliest reported next
// expiry, but at least j+1 and at most j+97.
func tbStep(j uint64, next []uint64) uint64 {
	n := j + 97
	for _, e := range next {
		if e > j && e < n {
			n = e
		}
	}
	return n
}

// tbCheckNextExpiry arms timers and runs the wheel: no non-deferrable
// timer may expire before the last reported NextExpiry, one must expire at
// it, and NextTimerInterrupt must agree with it.
func tbCheckNextExpiry(t *testing.T, p sdk.TimerBase, j0 uint64) {
	deferrable := map[sdk.TimerID]bool{}
	var st sdk.WheelState
	for k, d := range tbDeltas {
		id := sdk.TimerID(k + 1)
		tm := sdk.WheelTimer{ID: id, Expires: j0 + 1 + d*3}
		if k%4 == 3 {
			tm.Flags = sdk.TimerDeferrable
			deferrable[id] = true
		}
		st = p.ModTimer(0, j0, tm).State
	}
	left := len(tbDeltas)
	// Visit the jiffy before each reported NextExpiry (nothing may expire yet)
	// and the NextExpiry itself (something must): that finds an early expiry
	// without a call per jiffy, which matters when the suite runs over gRPC.
	step := func(j uint64) uint64 {
		switch e := st.NextExpiry; {
		case e == sdk.NoExpiry:
			return j + 97 // only deferrable timers left: drain them
		case e > j+1:
			return e - 1
		}
		return j + 1
	}
	for j := j0 + 1; left > 0 && j < j0+200000; j = step(j) {
		if n := p.NextTimerInterrupt(0, j-1).Next; !tbNextAgrees(n, st.NextExpiry, j-1) {
			t.Fatalf("NextTimerInterrupt(0, %d).Next = %d, State.NextExpiry = %d", j-1, n, st.NextExpiry)
		}
		r := tbRun(t, p, 0, j)
		hit := false
		for _, e := range r.Expired {
			left--
			if deferrable[e.ID] {
				continue
			}
			hit = true
			if j < st.NextExpiry {
				t.Fatalf("RunTimers(0, %d): timer %d expired before NextExpiry %d", j, e.ID, st.NextExpiry)
			}
		}
		if st.NextExpiry != sdk.NoExpiry && j >= st.NextExpiry && !hit {
			t.Fatalf("RunTimers(0, %d): nothing expired at NextExpiry %d", j, st.NextExpiry)
		}
		st = r.State
	}
	if left != 0 || st.NextExpiry != sdk.NoExpiry {
		t.Errorf("%d timers left, NextExpiry %d, want none", left, st.NextExpiry)
	}
}

// tbNextAgrees: get_next_timer_interrupt() answers jiffies when the earliest
// timer is due, never something later than the earliest expiry.
func tbNextAgrees(next, nextExpiry, j uint64) bool {
	if nextExpiry == sdk.NoExpiry {
		return next == sdk.NoExpiry
	}
	return next >= j && next <= max(nextExpiry, j)
}

func tbCheckDeferrable(t *testing.T, p sdk.TimerBase, j0 uint64) {
	r := p.ModTimer(0, j0, sdk.WheelTimer{ID: 1, Expires: j0 + 20, Flags: sdk.TimerDeferrable})
	if r.State.NextExpiry != sdk.NoExpiry || r.State.Pending != 1 {
		t.Errorf("deferrable only: State = %+v, want NextExpiry NoExpiry and Pending 1", r.State)
	}
	if n := p.NextTimerInterrupt(0, j0); n.Next != sdk.NoExpiry {
		t.Errorf("deferrable only: NextTimerInterrupt(0, %d).Next = %d, want NoExpiry", j0, n.Next)
	}
	for j := j0 + 1; j < j0+100; j++ {
		r := tbRun(t, p, 0, j)
		if len(r.Expired) == 0 {
			continue
		}
		if r.Expired[0].ID != 1 || j < j0+20 {
			t.Errorf("RunTimers(0, %d) = %+v, want the deferrable timer at or after %d", j, r.Expired, j0+20)
		}
		return
	}
	t.Errorf("the deferrable timer never ran while the CPU ticked")
}

func tbCheckPeriod(t *testing.T, p sdk.TimerBase, j0 uint64) {
	const period = 10
	p.ModTimer(0, j0, sdk.WheelTimer{ID: 7, Expires: j0 + 5, Period: period, CallbackCost: 250})
	runs, minNext := 0, j0+5
	for j := j0 + 1; j < j0+200 && runs < 5; j++ {
		r := tbRun(t, p, 0, j)
		for _, e := range r.Expired {
			runs++
			if e.ID != 7 || j < minNext || !e.Rearmed || e.NewExpires < j+period {
				t.Fatalf("RunTimers(0, %d) = %+v, want timer 7 at >= %d re-armed to >= %d", j, e, minNext, j+period)
			}
			if r.Cost < e.Offset+250 {
				t.Errorf("RunTimers(0, %d).Cost = %d, want >= offset %d + callback 250", j, r.Cost, e.Offset)
			}
			minNext = e.NewExpires
			if r.State.Pending != 1 {
				t.Errorf("after a re-arm Pending = %d, want 1", r.State.Pending)
			}
		}
	}
	if runs < 5 {
		t.Fatalf("periodic timer ran %d times in 200 jiffies, want >= 5", runs)
	}
	j := j0 + 200
	tbOp(t, "DelTimer(periodic)", p.DelTimer(0, j, 7), true, 0)
	for k := j + 1; k < j+50; k++ {
		if r := tbRun(t, p, 0, k); len(r.Expired) != 0 {
			t.Fatalf("RunTimers(0, %d) = %+v after DelTimer", k, r.Expired)
		}
	}
}

func tbCheckPerCPU(t *testing.T, p sdk.TimerBase, j0 uint64) {
	p.ModTimer(1, j0, sdk.WheelTimer{ID: 1, Expires: j0 + 3})
	r := p.ModTimer(0, j0, sdk.WheelTimer{ID: 2, Expires: j0 + 400})
	if r.State.Pending != 1 {
		t.Errorf("CPU 0 State.Pending = %d, want 1 (the CPU 1 timer is not CPU 0's)", r.State.Pending)
	}
	for j := j0 + 1; j < j0+50; j++ {
		if r := tbRun(t, p, 0, j); len(r.Expired) != 0 {
			t.Fatalf("RunTimers(0, %d) = %+v, ran a CPU 1 timer or one far in the future", j, r.Expired)
		}
	}
	if r := tbRun(t, p, 1, j0+50); len(r.Expired) != 1 || r.Expired[0].ID != 1 {
		t.Errorf("RunTimers(1, %d) = %+v, want timer 1", j0+50, r.Expired)
	}
}

// inPlaceAsked is a TimerBase whose NextTimerInterrupt asks the plugin's
// in-place call, into an answer filled with garbage first (so that a field the
// plugin leaves unwritten shows).
type inPlaceAsked struct {
	sdk.TimerBase
	ip sdk.InPlaceNextTimer
}

func (p inPlaceAsked) NextTimerInterrupt(cpu int, jiffies uint64) sdk.NextTimerResult {
	r := sdk.NextTimerResult{Next: 0xdead, Cost: 12345, State: sdk.WheelState{RaiseAt: 1, NextExpiry: 2, Pending: 77,
		Split: true, LocalNext: 3, GlobalNext: 4}}
	p.ip.NextTimerInterruptInto(cpu, jiffies, &r)
	return r
}

// repeatAsked is a TimerBase whose NextTimerInterrupt asks twice, checking
// that the repeat answers as sdk.RepeatFreeNextTimer promises: the first
// call's answer at cost 0.
type repeatAsked struct {
	sdk.TimerBase
	t *testing.T
}

func (p repeatAsked) NextTimerInterrupt(cpu int, jiffies uint64) sdk.NextTimerResult {
	r := p.TimerBase.NextTimerInterrupt(cpu, jiffies)
	again := p.TimerBase.NextTimerInterrupt(cpu, jiffies)
	want := r
	want.Cost = 0
	if again != want {
		p.t.Errorf("NextTimerInterrupt(%d, %d) repeated = %+v, want the first answer %+v at cost 0", cpu, jiffies, again, r)
	}
	return r
}

// tbScript feeds p a fixed pseudo-random sequence of every call and returns
// all answers, for the determinism check.
func tbScript(t *testing.T, p sdk.TimerBase, j0 uint64) []any {
	t.Helper()
	var out []any
	x := uint64(0x9E3779B97F4A7C15)
	rnd := func(n uint64) uint64 { // xorshift64*, fixed seed
		x ^= x >> 12
		x ^= x << 25
		x ^= x >> 27
		return (x * 2685821657736338717) % n
	}
	j := j0
	for i := 0; i < 2000; i++ {
		cpu := int(rnd(tbCPUs))
		id := sdk.TimerID(rnd(40) + 1)
		switch rnd(6) {
		case 0, 1:
			tm := sdk.WheelTimer{ID: id, Expires: j + rnd(3000), CallbackCost: int64(rnd(500))}
			if rnd(4) == 0 {
				tm.Flags |= sdk.TimerDeferrable
			}
			if rnd(5) == 0 {
				tm.Period = rnd(300) + 1
			}
			out = append(out, p.ModTimer(cpu, j, tm))
		case 2:
			out = append(out, p.DelTimer(cpu, j, id))
		case 3:
			out = append(out, p.NextTimerInterrupt(cpu, j))
		default:
			j += rnd(40)
			if rnd(10) == 0 {
				j += rnd(20000)
			}
			out = append(out, tbRun(t, p, cpu, j))
		}
	}
	return append(out, p.Counters())
}
