package hrtimer

import (
	"slices"
	"testing"

	"github.com/tickemu/tickemu/framework/sdk"
	"github.com/tickemu/tickemu/framework/sdk/ktime"
)

// TestSoftVsHardOrdering checks that a hard and a soft timer due at the same
// instant run in hard irq (Interrupt) and then in HRTIMER_SOFTIRQ
// (RunSoftirq), in that order, and that the interrupt raises the softirq
// (hrtimer_interrupt(): now >= softirq_expires_next).
func TestSoftVsHardOrdering(t *testing.T) {
	for _, e := range eras {
		t.Run(e.name, func(t *testing.T) {
			p := configure(t, highRes(1), e.config())
			p.Start(0, 0, sdk.HRTimer{ID: 1, Clock: sdk.ClockMonotonic, Mode: sdk.HRModeSoft}, at(1*ms), 0)
			p.Start(0, 0, hard(2), at(1*ms), 0)
			ir := p.Interrupt(0, at(1*ms))
			if len(ir.Expired) != 1 || ir.Expired[0].ID != 2 || ir.Expired[0].Soft || !ir.RaiseSoftirq {
				t.Fatalf("Interrupt = %+v, want only hard T2 and RaiseSoftirq", ir)
			}
			end := ir.End
			sr := p.RunSoftirq(0, end)
			if len(sr.Expired) != 1 || sr.Expired[0].ID != 1 || !sr.Expired[0].Soft || sr.Expired[0].Now < end {
				t.Fatalf("RunSoftirq(%v) = %+v, want soft T1 after the interrupt", end, sr)
			}
			if st := p.CPUState(0); st.SoftirqActivated || st.SoftirqExpiresNext != ktime.Max {
				t.Errorf("after the softirq: activated %v softirq_expires_next %v, want false and max", st.SoftirqActivated, st.SoftirqExpiresNext)
			}
		})
	}
}

// TestSoftFirstProgramsDevice checks that a soft timer that expires first is
// what the device is programmed for, and that the softirq re-arms the next
// soft timer through hrtimer_update_softirq_timer() -> hrtimer_reprogram().
func TestSoftFirstProgramsDevice(t *testing.T) {
	p := configure(t, highRes(1), zeroCosts())
	soft := func(id sdk.TimerID) sdk.HRTimer {
		return sdk.HRTimer{ID: id, Clock: sdk.ClockMonotonic, Mode: sdk.HRModeSoft}
	}
	if res := p.Start(0, 0, soft(1), at(1*ms), 0); !slices.Equal(res.Program, []ktime.Time{at(1 * ms)}) {
		t.Fatalf("Start(soft 1ms) Program = %v, want [1ms]", res.Program)
	}
	p.Start(0, 0, soft(2), at(2*ms), 0)
	p.Start(0, 0, hard(3), at(5*ms), 0)
	ir := p.Interrupt(0, at(1*ms))
	if !ir.RaiseSoftirq || len(ir.Expired) != 0 || !slices.Equal(ir.Program, []ktime.Time{at(5 * ms)}) {
		t.Fatalf("Interrupt(1ms) = %+v, want raise, no hard expiry, device to the hard 5ms (soft bases ignored while raised)", ir)
	}
	sr := p.RunSoftirq(0, at(1*ms))
	if len(sr.Expired) != 1 || sr.Expired[0].ID != 1 || !slices.Equal(sr.Program, []ktime.Time{at(2 * ms)}) {
		t.Fatalf("RunSoftirq = %+v, want T1 and the device re-armed for soft T2 at 2ms", sr)
	}
}

// TestSoftexpiresStopsScan checks __hrtimer_run_queues()'s rule: the scan of a
// base stops at the first timer (in expires order) whose softexpires is still
// in the future, even if a later one has reached its softexpires.
func TestSoftexpiresStopsScan(t *testing.T) {
	p := configure(t, highRes(1), zeroCosts())
	p.Start(0, 0, hard(1), at(2*ms), 0)                                         // [2ms, 2ms]
	p.Start(0, 0, hard(2), at(1*ms), 2*ms)                                      // [1ms, 3ms]: queued after T1
	p.Start(0, 0, sdk.HRTimer{ID: 3, Clock: sdk.ClockBoottime}, at(1500*us), 0) // another base
	ir := p.Interrupt(0, at(1500*us))
	if len(ir.Expired) != 1 || ir.Expired[0].ID != 3 {
		t.Errorf("Interrupt(1.5ms) expired %+v, want only T3 (T2 is behind not-yet-due T1)", ir.Expired)
	}
	ir = p.Interrupt(0, at(2*ms))
	var ids []sdk.TimerID
	for _, e := range ir.Expired {
		ids = append(ids, e.ID)
	}
	if !slices.Equal(ids, []sdk.TimerID{1, 2}) {
		t.Errorf("Interrupt(2ms) expired %v, want [1 2]", ids)
	}
}

// TestBaseOrder checks that bases run in index order (MONOTONIC before
// REALTIME) within one pass, whatever their monotonic expiries.
func TestBaseOrder(t *testing.T) {
	p := configure(t, highRes(1), zeroCosts())
	p.ClockWasSet(0, 0, sdk.ClockOffsets{Real: 1000 * ktime.Second})
	p.Start(0, 0, hard(1), at(2*ms), 0)
	p.Start(0, 0, sdk.HRTimer{ID: 2, Clock: sdk.ClockRealtime}, at(1000*ktime.Second+1*ms), 0)
	ir := p.Interrupt(0, at(3*ms))
	if len(ir.Expired) != 2 || ir.Expired[0].ID != 1 || ir.Expired[1].ID != 2 {
		t.Fatalf("Interrupt(3ms) expired %+v, want MONOTONIC T1 then REALTIME T2", ir.Expired)
	}
	if got, want := ir.Expired[1].BaseNow, at(1000*ktime.Second+3*ms); got != want {
		t.Errorf("REALTIME expiry BaseNow = %v, want %v (Now + offs_real)", got, want)
	}
}

// TestClockSetStorm is scenario 4 of docs/reference/hrtimer-clockevents.md (46eb1701c046): a hard MONO
// timer H at 1 ms, a soft ABS REALTIME timer S whose monotonic expiry is 10 ms;
// at 0.5 ms REALTIME jumps forward 7 ms, so S is due at 3 ms. With the stale
// softirq_expires_next the raise test keeps failing until mono time reaches
// 10 ms while programming S fails every pass: an interrupt storm (or, with
// fixed_100ms, a 100 ms stall). With the updated cache S runs at 3 ms after
// two interrupts.
func TestClockSetStorm(t *testing.T) {
	const real0 = 1_700_000_000 * ktime.Second
	tests := []struct {
		softirq, hang string
		minIRQs       int
		maxIRQs       int
		ranFrom       ktime.Time
		ranTo         ktime.Time
	}{
		{"updated", "proportional", 2, 2, at(3 * ms), at(3*ms + 1*us)},
		{"updated", "max_hang_time", 2, 2, at(3 * ms), at(3*ms + 1*us)},
		{"updated", "fixed_100ms", 2, 2, at(3 * ms), at(3*ms + 1*us)},
		{"stale", "proportional", 1000, 1 << 30, at(10 * ms), at(10*ms + 10*us)},
		{"stale", "max_hang_time", 1000, 1 << 30, at(10 * ms), at(10*ms + 10*us)},
		{"stale", "fixed_100ms", 3, 3, at(103 * ms), at(104 * ms)},
	}
	for _, tc := range tests {
		t.Run(tc.softirq+"/"+tc.hang, func(t *testing.T) {
			r := newRig(t, configure(t, highRes(1), map[string]string{"softirq_next": tc.softirq, "hang_delay": tc.hang, "restart": "double"}))
			r.clockWasSet(0, sdk.ClockOffsets{Real: real0, TAI: real0 + 37*ktime.Second})
			r.start(0, 0, hard(1), at(1*ms), 0)
			s := sdk.HRTimer{ID: 2, Clock: sdk.ClockRealtime, Mode: sdk.HRModeAbs | sdk.HRModeSoft}
			r.start(0, 0, s, at(real0+10*ms), 0)
			r.clockWasSet(at(500*us), sdk.ClockOffsets{Real: real0 + 7*ms, TAI: real0 + 37*ktime.Second + 7*ms})
			for len(r.expiriesOf(2)) == 0 {
				next := r.fireTime(0)
				if next == ktime.Max || next > at(1000*ms) {
					t.Fatalf("S never ran; device %v", r.dev[0])
				}
				r.advance(next)
			}
			ran := r.expiriesOf(2)[0].Now
			irqs := r.irqs[0]
			t.Logf("S ran at %v after %d interrupts, %d hangs", ran, irqs, r.p.CPUState(0).NrHangs)
			if irqs < tc.minIRQs || irqs > tc.maxIRQs {
				t.Errorf("%d interrupts until S ran, want [%d, %d]", irqs, tc.minIRQs, tc.maxIRQs)
			}
			if ran < tc.ranFrom || ran > tc.ranTo {
				t.Errorf("S ran at %v, want within [%v, %v]", ran, tc.ranFrom, tc.ranTo)
			}
		})
	}
}
