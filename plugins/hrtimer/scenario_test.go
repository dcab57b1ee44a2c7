package hrtimer

import (
	"fmt"
	"slices"
	"testing"

	"github.com/tickemu/tickemu/framework/ktime"
	"github.com/tickemu/tickemu/framework/sdk"
)

// era is one combination of the restart and softirq strategies, named after
// the kernel state it reproduces (the era table of docs/reference/hrtimer-clockevents.md).
type era struct {
	name    string
	restart string
	softirq string
}

var eras = []era{
	{name: "E-5.10", restart: "double", softirq: "stale"},
	{name: "E-46eb", restart: "double", softirq: "updated"},
	{name: "E-627e", restart: "deferred", softirq: "updated"},
	{name: "stale+deferred", restart: "deferred", softirq: "stale"},
}

func (e era) config() map[string]string {
	return map[string]string{"restart": e.restart, "softirq_next": e.softirq}
}

// step is one host operation and the device writes it must make.
type step struct {
	op      string // "start", "cancel"
	id      sdk.TimerID
	expires ktime.Time // for start, ABS CLOCK_MONOTONIC
	want    []ktime.Time
}

func runSteps(t *testing.T, p *Plugin, steps []step) {
	t.Helper()
	for i, s := range steps {
		var res sdk.HROpResult
		switch s.op {
		case "start":
			res = p.Start(0, 0, hard(s.id), s.expires, 0)
		case "cancel":
			res = p.Cancel(0, 0, s.id)
		}
		if !slices.Equal(res.Program, s.want) && !(len(res.Program) == 0 && len(s.want) == 0) {
			t.Errorf("step %d: %s(T%d, %v) Program = %v, want %v", i, s.op, s.id, s.expires, res.Program, s.want)
		}
	}
}

// TestCancelFirstOfThree is scenario 1 of docs/reference/hrtimer-clockevents.md: cancelling next_timer
// reprograms once to the new first timer (__remove_hrtimer() ->
// hrtimer_force_reprogram(skip_equal=1)); cancelling a later timer never writes.
// The same in every era.
func TestCancelFirstOfThree(t *testing.T) {
	steps := []step{
		{op: "start", id: 1, expires: at(10 * ms), want: []ktime.Time{at(10 * ms)}},
		{op: "start", id: 2, expires: at(20 * ms)},
		{op: "start", id: 3, expires: at(30 * ms)},
		{op: "cancel", id: 1, want: []ktime.Time{at(20 * ms)}},
		{op: "cancel", id: 3},
		{op: "start", id: 3, expires: at(30 * ms)},
		{op: "cancel", id: 2, want: []ktime.Time{at(30 * ms)}},
	}
	for _, e := range eras {
		t.Run(e.name, func(t *testing.T) {
			p := configure(t, highRes(1), e.config())
			runSteps(t, p, steps[:4])
			if got := p.CPUState(0).ExpiresNext; got != at(20*ms) {
				t.Errorf("after cancel T1: expires_next = %v, want %v", got, at(20*ms))
			}
			runSteps(t, p, steps[4:])
		})
	}
}

// TestRestartFirstTimer is scenario 2 of docs/reference/hrtimer-clockevents.md (627ef5ae2df8): restarting
// the first timer costs a removal write and an enqueue write before the fix,
// one force_reprogram(skip_equal) write, or none, after it.
func TestRestartFirstTimer(t *testing.T) {
	tests := []struct {
		name       string
		id         sdk.TimerID
		to         ktime.Time
		wantDouble []ktime.Time
		wantDefer  []ktime.Time
	}{
		{"first to +15ms", 1, at(15 * ms), []ktime.Time{at(20 * ms), at(15 * ms)}, []ktime.Time{at(15 * ms)}},
		{"first to same expiry", 1, at(10 * ms), []ktime.Time{at(20 * ms), at(10 * ms)}, nil},
		{"first to +25ms", 1, at(25 * ms), []ktime.Time{at(20 * ms)}, []ktime.Time{at(20 * ms)}},
		{"second to +5ms", 2, at(5 * ms), []ktime.Time{at(5 * ms)}, []ktime.Time{at(5 * ms)}},
		{"second to +25ms", 2, at(25 * ms), nil, nil},
	}
	for _, e := range eras {
		for _, tc := range tests {
			t.Run(e.name+"/"+tc.name, func(t *testing.T) {
				p := configure(t, highRes(1), e.config())
				runSteps(t, p, []step{
					{op: "start", id: 1, expires: at(10 * ms), want: []ktime.Time{at(10 * ms)}},
					{op: "start", id: 2, expires: at(20 * ms)},
					{op: "start", id: 3, expires: at(30 * ms)},
				})
				want := tc.wantDefer
				if e.restart == "double" {
					want = tc.wantDouble
				}
				res := p.Start(0, 0, hard(tc.id), tc.to, 0)
				if !slices.Equal(res.Program, want) {
					t.Errorf("Start(T%d, %v) Program = %v, want %v", tc.id, tc.to, res.Program, want)
				}
				if res.Ret != 1 {
					t.Errorf("Start(T%d) Ret = %d, want 1 (was queued)", tc.id, res.Ret)
				}
				if got, want := p.NextEvent(0, 0, 0), min(tc.to, at(10*ms)); tc.id == 2 && got != want {
					t.Errorf("NextEvent = %v, want %v", got, want)
				}
			})
		}
	}
}

// TestNCMSoftTimerRestart is scenario 3 of docs/reference/hrtimer-clockevents.md (the f_ncm pattern behind
// 46eb1701c046 and 627ef5ae2df8): a hard 1 ms tick and a REL|SOFT 300 us timer
// restarted every 2 us. Device writes per restart: ~0 in E-5.10 (the stale
// softirq_expires_next makes hrtimer_reprogram() return early, so the soft
// timer is not programmed and fires late), 2 in E-46eb, 1 with 627ef5ae2df8.
func TestNCMSoftTimerRestart(t *testing.T) {
	const restarts = 200 // every 2 us from 100 us to 500 us; the tick is at 1 ms
	tests := []struct {
		era       era
		wantTotal int  // writes made by the restarts
		late      bool // S fires at the next tick instead of at its expiry
	}{
		{eras[0], 1, true},             // only the first restart writes (to the tick)
		{eras[1], 2 * restarts, false}, // removal write + enqueue write
		{eras[2], restarts, false},     // one force_reprogram write
		{eras[3], restarts, false},
	}
	tick := sdk.HRTimer{ID: 1, Clock: sdk.ClockMonotonic, Mode: sdk.HRModeAbs, Period: 1 * ms}
	s := sdk.HRTimer{ID: 2, Clock: sdk.ClockMonotonic, Mode: sdk.HRModeRel | sdk.HRModeSoft}
	for _, tc := range tests {
		t.Run(tc.era.name, func(t *testing.T) {
			r := newRig(t, configure(t, highRes(1), merge(zeroCosts(), tc.era.config())))
			r.start(0, 0, tick, at(1*ms), 0)
			r.start(0, at(100*us-2*us), s, at(300*us), 0)
			total := 0
			var last ktime.Time
			for i := range restarts {
				last = at(100*us + int64(i)*2*us)
				total += len(r.start(0, last, s, at(300*us), 0).Program)
			}
			if total != tc.wantTotal {
				t.Errorf("%d restarts made %d device writes (%.3f per restart), want %d", restarts, total, float64(total)/restarts, tc.wantTotal)
			}
			r.advance(at(3 * ms))
			got := r.expiriesOf(2)
			if len(got) != 1 {
				t.Fatalf("soft timer expired %d times, want 1", len(got))
			}
			due := last.Add(300 * us)
			if tc.late {
				if got[0].Now < at(1*ms) {
					t.Errorf("soft timer ran at %v, want at the 1 ms tick (stale softirq_expires_next)", got[0].Now)
				}
			} else if got[0].Now != due {
				t.Errorf("soft timer ran at %v, want %v", got[0].Now, due)
			}
			if !got[0].softirq || !got[0].Soft {
				t.Errorf("soft timer expiry %+v not reported by RunSoftirq as Soft", got[0])
			}
		})
	}
}

// TestLowRes is scenario 11 of docs/reference/hrtimer-clockevents.md: with high-res off and HZ=250 a 1 ms
// timer expires at the next tick (at most 4 ms late), hrtimer code never writes
// the device, and hrtimer_forward() clamps a 1 us interval to
// hrtimer_resolution = TICK_NSEC.
func TestLowRes(t *testing.T) {
	p := configure(t, lowRes(1, 250), nil)
	r := newRig(t, p)
	tickNsec := ktime.TickNsec(250)
	res := r.start(0, at(500*us), sdk.HRTimer{ID: 1, Clock: sdk.ClockMonotonic, Mode: sdk.HRModeRel}, at(1*ms), 0)
	per := r.start(0, at(500*us), sdk.HRTimer{ID: 2, Clock: sdk.ClockMonotonic, Mode: sdk.HRModeAbs, Period: 1 * us}, at(1*ms), 0)
	c := r.cancel(0, at(600*us), 99)
	r.advance(at(20 * ms))
	for name, prog := range map[string][]ktime.Time{"start": res.Program, "start periodic": per.Program, "cancel": c.Program} {
		if len(prog) != 0 {
			t.Errorf("low-res %s Program = %v, want none", name, prog)
		}
	}
	for _, ir := range r.results {
		if len(ir.Program) != 0 {
			t.Errorf("RunQueues Program = %v, want none", ir.Program)
		}
	}
	one := r.expiriesOf(1)
	if len(one) != 1 || one[0].Now < at(1500*us) || one[0].Now.Sub(at(1500*us)) > tickNsec {
		t.Fatalf("1 ms REL timer started at 0.5 ms expired %+v, want once within one tick after 1.5 ms", one)
	}
	if one[0].Now.Sub(0)%tickNsec >= 1*us {
		t.Errorf("expiry at %v is not at a tick (TICK_NSEC %d)", one[0].Now, tickNsec)
	}
	got := r.expiriesOf(2)
	if len(got) < 2 {
		t.Fatalf("periodic timer expired %d times, want >= 2", len(got))
	}
	for i := 1; i < len(got); i++ {
		if d := got[i].NewExpires.Sub(got[i-1].NewExpires); d%tickNsec != 0 {
			t.Errorf("periodic timer moved by %d ns between expiries, want a multiple of TICK_NSEC %d (1 us clamped)", d, tickNsec)
		}
	}
	if st := p.CPUState(0); st.NrEvents != 0 {
		t.Errorf("low-res nr_events = %d, want 0 (hrtimer_interrupt never runs)", st.NrEvents)
	}
}

// TestStartMovesTimerToCallingCPU checks switch_hrtimer_base(): restarting a
// timer queued on another CPU moves it to the calling CPU, the removal from the
// remote base does not write that CPU's device, and the local enqueue does.
func TestStartMovesTimerToCallingCPU(t *testing.T) {
	for _, e := range eras {
		t.Run(e.name, func(t *testing.T) {
			p := configure(t, highRes(2), e.config())
			if res := p.Start(0, 0, hard(1), at(10*ms), 0); !slices.Equal(res.Program, []ktime.Time{at(10 * ms)}) {
				t.Fatalf("Start on cpu0 Program = %v, want [10ms]", res.Program)
			}
			res := p.Start(1, 0, hard(1), at(5*ms), 0)
			if !slices.Equal(res.Program, []ktime.Time{at(5 * ms)}) || res.Ret != 1 {
				t.Errorf("Start on cpu1 = %+v, want Program [5ms] Ret 1", res)
			}
			if got := p.NextEvent(0, 0, 0); got != ktime.Max {
				t.Errorf("NextEvent(cpu0) = %v, want max (timer moved)", got)
			}
			if got := p.NextEvent(1, 0, 0); got != at(5*ms) {
				t.Errorf("NextEvent(cpu1) = %v, want 5ms", got)
			}
			// cpu0's device still points at 10ms; its spurious interrupt finds nothing.
			ir := p.Interrupt(0, at(10*ms))
			if len(ir.Expired) != 0 || !slices.Equal(ir.Program, []ktime.Time{ktime.Max}) {
				t.Errorf("cpu0 stale interrupt = %+v, want no expiry and the device stopped", ir)
			}
		})
	}
}

// TestCancelReturn checks hrtimer_try_to_cancel()'s -1/0/1 and that a remote
// cancel never writes the owner's device.
func TestCancelReturn(t *testing.T) {
	p := configure(t, highRes(2), zeroCosts())
	p.Start(0, 0, sdk.HRTimer{ID: 1, Clock: sdk.ClockMonotonic, CallbackCost: 10 * us}, at(1*ms), 0)
	p.Start(0, 0, hard(2), at(2*ms), 0)
	p.Start(0, 0, hard(3), at(3*ms), 0)
	tests := []struct {
		cpu  int
		now  ktime.Time
		id   sdk.TimerID
		want int
		prog int
	}{
		{0, 0, 42, 0, 0},             // never started
		{1, 0, 2, 1, 0},              // remote cancel: no write on cpu1, none possible on cpu0
		{1, 0, 2, 0, 0},              // already cancelled
		{1, at(1005 * us), 1, -1, 0}, // inside T1's callback (run by the interrupt at 1 ms)
		{1, at(1010 * us), 1, 0, 0},  // callback returned, NORESTART
		{0, at(1010 * us), 3, 1, 1},  // local cancel of next_timer: write to max
	}
	for i, tc := range tests {
		if i == 3 {
			ir := p.Interrupt(0, at(1*ms))
			if len(ir.Expired) != 1 || ir.Expired[0].ID != 1 || ir.Expired[0].Now != at(1*ms) {
				t.Fatalf("Interrupt(1ms) = %+v, want T1 at 1ms", ir)
			}
		}
		res := p.Cancel(tc.cpu, tc.now, tc.id)
		if res.Ret != tc.want || len(res.Program) != tc.prog {
			t.Errorf("Cancel(cpu%d, %v, T%d) = Ret %d Program %v, want Ret %d and %d writes", tc.cpu, tc.now, tc.id, res.Ret, res.Program, tc.want, tc.prog)
		}
	}
	if got := fmt.Sprint(p.CPUState(0).ExpiresNext); got != "max" {
		t.Errorf("expires_next after cancelling everything = %s, want max", got)
	}
}
