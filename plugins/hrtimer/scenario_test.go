package hrtimer

import (
	"testing"

	"github.com/tickemu/tickemu/framework/sdk"
	"github.com/tickemu/tickemu/framework/sdk/ktime"
)

// Timelines of single operations (scenarios 1 and 2, cancel return values,
// moving a timer between CPUs) are data-driven: testdata/timeline, run by
// TestTimelines (timeline_test.go).

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
