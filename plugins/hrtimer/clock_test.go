package hrtimer

import (
	"testing"

	"github.com/tickemu/tickemu/framework/sdk"
	"github.com/tickemu/tickemu/framework/sdk/ktime"
)

const (
	offReal = 1000 * ktime.Second
	offBoot = 5 * ktime.Second
	offTAI  = offReal + 37*ktime.Second
)

// TestRelAbsClocks checks expiry resolution across clocks (started at 1 ms
// with offsets REALTIME +1000 s, BOOTTIME +5 s, TAI +1037 s) and how a
// 2 ms forward jump of REALTIME/TAI moves each: ABS REALTIME and TAI timers
// move, REL REALTIME timers were made MONOTONIC by __hrtimer_setup() and do
// not, BOOTTIME and MONOTONIC never do (clock_was_set(CLOCK_SET_WALL)).
func TestRelAbsClocks(t *testing.T) {
	tests := []struct {
		name        string
		clock       sdk.ClockID
		mode        sdk.HRMode
		expires     ktime.Time
		wantExpires ktime.Time // in the timer's (resolved) clock
		wantMono    ktime.Time
		wantAfter   ktime.Time // monotonic expiry after the jump
	}{
		{"mono abs", sdk.ClockMonotonic, sdk.HRModeAbs, at(5 * ms), at(5 * ms), at(5 * ms), at(5 * ms)},
		{"mono rel", sdk.ClockMonotonic, sdk.HRModeRel, at(5 * ms), at(6 * ms), at(6 * ms), at(6 * ms)},
		{"real abs", sdk.ClockRealtime, sdk.HRModeAbs, at(offReal + 5*ms), at(offReal + 5*ms), at(5 * ms), at(3 * ms)},
		{"real rel becomes mono", sdk.ClockRealtime, sdk.HRModeRel, at(5 * ms), at(6 * ms), at(6 * ms), at(6 * ms)},
		{"boot abs", sdk.ClockBoottime, sdk.HRModeAbs, at(offBoot + 5*ms), at(offBoot + 5*ms), at(5 * ms), at(5 * ms)},
		{"boot rel", sdk.ClockBoottime, sdk.HRModeRel, at(5 * ms), at(offBoot + 6*ms), at(6 * ms), at(6 * ms)},
		{"tai abs", sdk.ClockTAI, sdk.HRModeAbs, at(offTAI + 5*ms), at(offTAI + 5*ms), at(5 * ms), at(3 * ms)},
		{"tai rel", sdk.ClockTAI, sdk.HRModeRel, at(5 * ms), at(offTAI + 6*ms), at(6 * ms), at(4 * ms)},
		{"real abs soft", sdk.ClockRealtime, sdk.HRModeAbs | sdk.HRModeSoft, at(offReal + 5*ms), at(offReal + 5*ms), at(5 * ms), at(3 * ms)},
		{"real rel soft", sdk.ClockRealtime, sdk.HRModeRel | sdk.HRModeSoft, at(5 * ms), at(6 * ms), at(6 * ms), at(6 * ms)},
		{"abs before the offset clamps to 0", sdk.ClockRealtime, sdk.HRModeAbs, at(offReal - 5*ms), at(offReal - 5*ms), 0, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := configure(t, highRes(1), zeroCosts())
			p.ClockWasSet(0, 0, sdk.ClockOffsets{Real: offReal, Boot: offBoot, TAI: offTAI})
			res := p.Start(0, at(1*ms), sdk.HRTimer{ID: 1, Clock: tc.clock, Mode: tc.mode}, tc.expires, 0)
			if res.Expires != tc.wantExpires || res.SoftExpires != tc.wantExpires {
				t.Errorf("Start(%v %v %v) Expires %v SoftExpires %v, want %v", tc.clock, tc.mode, tc.expires, res.Expires, res.SoftExpires, tc.wantExpires)
			}
			if got := p.NextEvent(0, at(1*ms), 0); got != tc.wantMono {
				t.Errorf("NextEvent = %v, want %v", got, tc.wantMono)
			}
			p.ClockWasSet(0, at(2*ms), sdk.ClockOffsets{Real: offReal + 2*ms, Boot: offBoot, TAI: offTAI + 2*ms})
			if got := p.NextEvent(0, at(2*ms), 0); got != tc.wantAfter {
				t.Errorf("NextEvent after a 2 ms REALTIME jump = %v, want %v", got, tc.wantAfter)
			}
		})
	}
}

// TestSlackRange checks _softexpires/_expires: the device is programmed for
// the hard end of the range, and the timer may run from the soft end on.
func TestSlackRange(t *testing.T) {
	p := configure(t, highRes(1), zeroCosts())
	res := p.Start(0, 0, sdk.HRTimer{ID: 1, Clock: sdk.ClockMonotonic, Mode: sdk.HRModeRel}, at(1*ms), 50*us)
	if res.SoftExpires != at(1*ms) || res.Expires != at(1050*us) || len(res.Program) != 1 || res.Program[0] != at(1050*us) {
		t.Fatalf("Start(REL 1ms, slack 50us) = %+v, want soft 1ms, hard 1.05ms programmed", res)
	}
	// Another timer's interrupt at 1.02 ms runs it inside its range.
	p.Start(0, 0, hard(2), at(1020*us), 0)
	ir := p.Interrupt(0, at(1020*us))
	if len(ir.Expired) != 2 {
		t.Errorf("Interrupt(1.02ms) expired %+v, want both (T1 is inside [1ms, 1.05ms])", ir.Expired)
	}
}

// TestClockWasSetIPI compares clock_was_set() before and after 1e7f7fbcd40c:
// "all" names every CPU for retrigger_next_event() (on_each_cpu()), whose
// force_reprogram(skip_equal=0) writes each device once; "needed" names only
// the CPU whose REALTIME timer moved ahead of its programmed event
// (update_needs_ipi()); the mask step itself writes nothing.
func TestClockWasSetIPI(t *testing.T) {
	tests := []struct {
		ipi       string
		jump      int64
		wantRet   [2]int
		wantWrite [2]int
	}{
		{"all", 2 * ms, [2]int{sdk.ClockWasSetEachCPU, sdk.ClockWasSetEachCPU}, [2]int{1, 1}},
		{"needed", 2 * ms, [2]int{sdk.ClockWasSetIPI, 0}, [2]int{1, 0}},
		{"needed", -2 * ms, [2]int{0, 0}, [2]int{0, 0}}, // the timer moved later: the early event re-evaluates
	}
	clockWasSet := func(p *Plugin, now ktime.Time, off sdk.ClockOffsets) (rets, writes [2]int) {
		for cpu := range 2 {
			res := p.ClockWasSet(cpu, now, off)
			if len(res.Program) != 0 {
				t.Errorf("ClockWasSet(cpu%d) wrote %v, want no device write", cpu, res.Program)
			}
			rets[cpu] = res.Ret
		}
		for cpu := range 2 {
			if rets[cpu] != 0 {
				writes[cpu] = len(p.RetriggerNextEvent(cpu, now).Program)
			}
		}
		return rets, writes
	}
	for _, tc := range tests {
		t.Run(tc.ipi, func(t *testing.T) {
			p := configure(t, highRes(2), map[string]string{"clock_was_set_ipi": tc.ipi})
			clockWasSet(p, 0, sdk.ClockOffsets{Real: offReal, TAI: offTAI})
			p.Start(0, 0, hard(1), at(10*ms), 0)
			p.Start(0, 0, sdk.HRTimer{ID: 2, Clock: sdk.ClockRealtime}, at(offReal+5*ms), 0)
			p.Start(1, 0, hard(3), at(4*ms), 0)
			rets, writes := clockWasSet(p, at(1*ms), sdk.ClockOffsets{Real: offReal + tc.jump, TAI: offTAI + tc.jump})
			if rets != tc.wantRet || writes != tc.wantWrite {
				t.Errorf("clock_was_set(%+d): Ret %v, retrigger writes %v; want %v and %v", tc.jump, rets, writes, tc.wantRet, tc.wantWrite)
			}
			// Either way the next interrupt of cpu0 sees the new offsets.
			if got, want := p.NextEvent(0, at(1*ms), 0), at(5*ms-tc.jump); got != want {
				t.Errorf("NextEvent(cpu0) = %v, want %v", got, want)
			}
		})
	}
}
