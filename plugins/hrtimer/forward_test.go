package hrtimer

import (
	"testing"

	"github.com/tickemu/tickemu/framework/sdk"
	"github.com/tickemu/tickemu/framework/sdk/ktime"
)

// TestForward checks hrtimer_forward()'s overrun arithmetic (kernel/time/
// hrtimer.c as of v6.15): after a forward expires > now, the return value
// counts every interval added, and both ends of the slack range move together.
func TestForward(t *testing.T) {
	tests := []struct {
		name       string
		res        int64 // hrtimer_resolution
		exp, soft  ktime.Time
		now        int64
		interval   int64
		wantOrun   int64
		wantExp    ktime.Time
		wantSoftEx ktime.Time
	}{
		{"exactly at expiry", 1, at(10 * us), at(10 * us), 10 * us, 10 * us, 1, at(20 * us), at(20 * us)},
		{"within one interval", 1, at(10 * us), at(10 * us), 15 * us, 10 * us, 1, at(20 * us), at(20 * us)},
		{"exact multiple", 1, at(10 * us), at(10 * us), 40 * us, 10 * us, 4, at(50 * us), at(50 * us)},
		{"multiple plus remainder", 1, at(10 * us), at(10 * us), 45 * us, 10 * us, 4, at(50 * us), at(50 * us)},
		{"slack preserved", 1, at(12 * us), at(10 * us), 25 * us, 10 * us, 2, at(32 * us), at(30 * us)},
		{"low-res clamps 1us to TICK_NSEC (HZ=250)", 4 * ms, at(1 * ms), at(1 * ms), 4 * ms, 1 * us, 1, at(5 * ms), at(5 * ms)},
		{"low-res many ticks late", 4 * ms, at(1 * ms), at(1 * ms), 13 * ms, 1 * us, 4, at(17 * ms), at(17 * ms)},
		// Divergence (see forward): the kernel returns 0 here and would loop.
		{"before the hard expiry", 1, at(12 * us), at(10 * us), 11 * us, 10 * us, 1, at(22 * us), at(20 * us)},
		{"saturates at KTIME_MAX", 1, ktime.Max - 5, ktime.Max - 5, int64(ktime.Max - 5), 10, 1, ktime.Max, ktime.Max},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := &Plugin{resolution: tc.res}
			tm := &timer{expires: tc.exp, softexpires: tc.soft}
			orun := p.forward(tm, tc.now, tc.interval)
			if orun != tc.wantOrun || tm.expires != tc.wantExp || tm.softexpires != tc.wantSoftEx {
				t.Errorf("forward(exp %v soft %v, now %d, %d) = %d, exp %v soft %v; want %d, %v, %v",
					tc.exp, tc.soft, tc.now, tc.interval, orun, tm.expires, tm.softexpires, tc.wantOrun, tc.wantExp, tc.wantSoftEx)
			}
			if tm.expires != ktime.Max && int64(tm.expires) <= tc.now {
				t.Errorf("forward left expires %v <= now %d", tm.expires, tc.now)
			}
		})
	}
}

// TestPeriodicOverruns checks that a declared Period restarts the timer from
// its callback with hrtimer_forward_now() and reports the overruns when the
// interrupt comes late.
func TestPeriodicOverruns(t *testing.T) {
	p := configure(t, highRes(1), zeroCosts())
	p.Start(0, 0, sdk.HRTimer{ID: 1, Clock: sdk.ClockMonotonic, Period: 1 * ms}, at(1*ms), 0)
	ir := p.Interrupt(0, at(4500*us)) // 3.5 ms late
	if len(ir.Expired) != 1 {
		t.Fatalf("Interrupt expired %+v, want one", ir.Expired)
	}
	e := ir.Expired[0]
	if !e.Restarted || e.Overruns != 4 || e.NewExpires != at(5*ms) {
		t.Errorf("expiry = %+v, want Restarted, Overruns 4, NewExpires 5ms", e)
	}
	if len(ir.Program) != 1 || ir.Program[0] != at(5*ms) {
		t.Errorf("Program = %v, want [5ms]", ir.Program)
	}
}
