package hrtimer

import (
	"slices"
	"testing"

	"github.com/tickemu/tickemu/framework/sdk"
	"github.com/tickemu/tickemu/framework/sdk/ktime"
)

// hangTimer is scenario 5 of docs/reference/hrtimer-clockevents.md's timer: period 10 us, and a callback
// that forwards first and then burns 30 us, so every pass leaves it expired.
var hangTimer = sdk.HRTimer{ID: 100, Clock: sdk.ClockMonotonic, Mode: sdk.HRModeAbs, Period: 10 * us, CallbackCost: 30 * us}

// TestHangPerEra runs one hanging interrupt with zero plugin costs, so the
// numbers are exact: passes at 10, 40 and 70 us, detection at 100 us, 90 us
// after entry.
//
// Era A (hrtimer_interrupt() as of v6.15): nr_retries += 3, delay = 90 us,
// hang_detected kept. Era B (2889243848560): delay 100 ms, flag cleared at
// once, nr_retries untouched. Era C (the fix): delay min(100 ms,
// max_hang_time) = 90 us, flag kept.
func TestHangPerEra(t *testing.T) {
	tests := []struct {
		hang        string
		wantDelay   int64
		wantFlag    bool
		wantRetries uint16
	}{
		{"proportional", 90 * us, true, 3},
		{"fixed_100ms", 100 * ms, false, 0},
		{"max_hang_time", 90 * us, true, 0},
	}
	for _, tc := range tests {
		t.Run(tc.hang, func(t *testing.T) {
			p := configure(t, highRes(1), merge(zeroCosts(), map[string]string{"hang_delay": tc.hang}))
			p.Start(0, 0, hangTimer, at(10*us), 0)
			ir := interrupt(p, 0, at(10*us))
			wantNow := []ktime.Time{at(10 * us), at(40 * us), at(70 * us)}
			var gotNow []ktime.Time
			for _, e := range ir.Expired {
				gotNow = append(gotNow, e.Now)
			}
			if !slices.Equal(gotNow, wantNow) {
				t.Errorf("callbacks ran at %v, want %v", gotNow, wantNow)
			}
			if !ir.Hang || ir.HangDelay != tc.wantDelay || ir.Retries != 2 || ir.End != at(100*us) {
				t.Errorf("Interrupt = Hang %v HangDelay %d Retries %d End %v, want true %d 2 %v", ir.Hang, ir.HangDelay, ir.Retries, ir.End, tc.wantDelay, at(100*us))
			}
			if want := []ktime.Time{at(100 * us).Add(tc.wantDelay)}; !slices.Equal(ir.Program, want) {
				t.Errorf("Program = %v, want %v", ir.Program, want)
			}
			st := p.CPUState(0)
			if st.HangDetected != tc.wantFlag || st.NrHangs != 1 || st.NrRetries != tc.wantRetries || st.MaxHangTime != uint32(90*us) || st.NrEvents != 1 {
				t.Errorf("state = %+v, want hang_detected %v nr_hangs 1 nr_retries %d max_hang_time 90us nr_events 1", st, tc.wantFlag, tc.wantRetries)
			}
			if st.ExpiresNext != at(80*us) {
				t.Errorf("expires_next = %v, want the already-expired 80us", st.ExpiresNext)
			}
		})
	}
}

// TestHangBlocksWrites checks what happens between a hang and the next
// interrupt: in every era a timer later than the (past) expires_next never
// writes; cancelling next_timer writes only in Era B, where hang_detected is
// already clear (__hrtimer_reprogram() blocks writes while it is set). The
// next interrupt clears the flag and writes resume.
func TestHangBlocksWrites(t *testing.T) {
	tests := []struct {
		hang             string
		cancelWrites     int
		nextIRQ          ktime.Time
		startAfterWrites int
	}{
		{"proportional", 0, at(190 * us), 1},
		{"fixed_100ms", 1, at(150 * us), 1}, // the cancel reprogrammed the device to T at 150 us
		{"max_hang_time", 0, at(190 * us), 1},
	}
	for _, tc := range tests {
		t.Run(tc.hang, func(t *testing.T) {
			r := newRig(t, configure(t, highRes(1), merge(zeroCosts(), map[string]string{"hang_delay": tc.hang})))
			r.start(0, 0, hangTimer, at(10*us), 0)
			r.advance(at(10 * us))
			if !r.results[0].Hang {
				t.Fatalf("first interrupt did not hang: %+v", r.results[0])
			}
			if res := r.start(0, at(120*us), hard(1), at(150*us), 0); len(res.Program) != 0 {
				t.Errorf("Start(T1 @150us) after the hang Program = %v, want none", res.Program)
			}
			if res := r.cancel(0, at(121*us), hangTimer.ID); len(res.Program) != tc.cancelWrites {
				t.Errorf("Cancel(next_timer) after the hang Program = %v, want %d writes", res.Program, tc.cancelWrites)
			}
			if got := r.p.CPUState(0).ExpiresNext; got != at(150*us) {
				t.Errorf("expires_next after the cancel = %v, want 150us", got)
			}
			if r.dev[0] != tc.nextIRQ {
				t.Fatalf("device armed for %v, want %v", r.dev[0], tc.nextIRQ)
			}
			r.advance(tc.nextIRQ)
			if st := r.p.CPUState(0); st.HangDetected {
				t.Errorf("hang_detected still set after the next interrupt")
			}
			if got := r.expiriesOf(1); len(got) != 1 || got[0].Now != tc.nextIRQ {
				t.Errorf("T1 expired %+v, want once at %v", got, tc.nextIRQ)
			}
			if res := r.start(0, at(500*us), hard(2), at(600*us), 0); len(res.Program) != tc.startAfterWrites {
				t.Errorf("Start after recovery Program = %v, want %d writes", res.Program, tc.startAfterWrites)
			}
		})
	}
}

// TestHangFlagVsCancel is scenario 6 of docs/reference/hrtimer-clockevents.md (Era A): after a hang the
// device stays at now+delay while T1 (+50 ms) is removed with T2 (+5 s) left:
// no write, and expires_next becomes T2 (the T1 50 ms / T2 5 s comment in
// __hrtimer_reprogram()).
func TestHangFlagVsCancel(t *testing.T) {
	r := newRig(t, configure(t, highRes(1), merge(zeroCosts(), map[string]string{"hang_delay": "proportional"})))
	r.start(0, 0, hard(1), at(50*ms), 0)
	r.start(0, 0, hard(2), at(5000*ms), 0)
	r.start(0, 0, hangTimer, at(10*us), 0)
	r.advance(at(10 * us))
	hangAt := r.dev[0]
	for _, id := range []sdk.TimerID{hangTimer.ID, 1} {
		if res := r.cancel(0, at(110*us), id); len(res.Program) != 0 || res.Ret != 1 {
			t.Errorf("Cancel(T%d) during the hang = %+v, want Ret 1 and no write", id, res)
		}
	}
	if st := r.p.CPUState(0); st.ExpiresNext != at(5000*ms) || r.dev[0] != hangAt {
		t.Errorf("expires_next %v device %v, want 5s and the hang target %v", st.ExpiresNext, r.dev[0], hangAt)
	}
	r.advance(hangAt)
	if r.dev[0] != at(5000*ms) || r.p.CPUState(0).HangDetected {
		t.Errorf("after the delayed interrupt: device %v hang_detected %v, want 5s and false", r.dev[0], r.p.CPUState(0).HangDetected)
	}
}

// expiriesPerSecond runs the rig for one simulated second and counts the
// expiries of timer id.
func expiriesPerSecond(r *rig, id sdk.TimerID) int {
	r.advance(at(1000 * ms))
	return len(r.expiriesOf(id))
}

// TestHangThroughputScenario5 is the end of scenario 5 of docs/reference/hrtimer-clockevents.md with the
// default costs: a permanently overrunning periodic timer. Throughput must come
// out as B << A ~= C.
func TestHangThroughputScenario5(t *testing.T) {
	got := map[string]int{}
	for _, h := range hangDelayNames {
		r := newRig(t, configure(t, highRes(1), map[string]string{"hang_delay": h}))
		r.start(0, 0, hangTimer, at(10*us), 0)
		got[h] = expiriesPerSecond(r, hangTimer.ID)
	}
	a, b, c := got["proportional"], got["fixed_100ms"], got["max_hang_time"]
	t.Logf("expiries/s: proportional %d, fixed_100ms %d, max_hang_time %d", a, b, c)
	if b*100 > a {
		t.Errorf("fixed_100ms = %d expiries/s, want < 1%% of proportional %d", b, a)
	}
	if d := a - c; d < 0 && -d*100 > a || d*100 > a {
		t.Errorf("max_hang_time = %d expiries/s, want within 1%% of proportional %d", c, a)
	}
}

// TestHangThroughputIntermittent is the timermix shape of the 2026 report
// (23.7M -> 11.55M -> 23.36M bogo ops/s): a busy periodic timer F (10 us
// period, 2 us callback) and, every 200 ms, a burst of four one-shot timers
// spaced so that each interrupt pass finds the next one already expired
// (spacing 1.2 us against 1.5 us callbacks: three failed passes, one hang).
// Era A and C recover in microseconds; Era B stops all timers on the CPU for
// 100 ms per hang, so F's throughput roughly halves.
func TestHangThroughputIntermittent(t *testing.T) {
	f := sdk.HRTimer{ID: 1, Clock: sdk.ClockMonotonic, Period: 10 * us, CallbackCost: 2 * us}
	got := map[string]int{}
	hangs := map[string]int{}
	for _, h := range hangDelayNames {
		r := newRig(t, configure(t, highRes(1), map[string]string{"hang_delay": h}))
		r.start(0, 0, f, at(10*us), 0)
		for burst := int64(0); burst < 5; burst++ {
			t0 := at((100 + 200*burst) * ms)
			for i := range int64(4) {
				b := sdk.HRTimer{ID: sdk.TimerID(10 + 4*burst + i), Clock: sdk.ClockMonotonic, CallbackCost: 1500}
				r.start(0, t0.Add(2500), b, t0.Add(3*us+i*1200), 0)
			}
		}
		got[h] = expiriesPerSecond(r, f.ID)
		for _, res := range r.results {
			if res.Hang {
				hangs[h]++
			}
		}
	}
	a, b, c := got["proportional"], got["fixed_100ms"], got["max_hang_time"]
	t.Logf("F expiries/s: proportional %d, fixed_100ms %d (%.1f%%), max_hang_time %d (%.2f%%); hangs %v",
		a, b, 100*float64(b-a)/float64(a), c, 100*float64(c-a)/float64(a), hangs)
	for _, h := range hangDelayNames {
		if hangs[h] != 5 {
			t.Errorf("%s: %d hangs, want 5 (one per burst)", h, hangs[h])
		}
	}
	if ratio := float64(b) / float64(a); ratio < 0.45 || ratio > 0.55 {
		t.Errorf("fixed_100ms/proportional = %.3f, want about 0.5", ratio)
	}
	if ratio := float64(c) / float64(a); ratio < 0.99 || ratio > 1.01 {
		t.Errorf("max_hang_time/proportional = %.3f, want about 1", ratio)
	}
}
