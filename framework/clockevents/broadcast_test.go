package clockevents

import (
	"reflect"
	"testing"

	"github.com/tickemu/tickemu/framework/sdk"
	"github.com/tickemu/tickemu/framework/sdk/ktime"
)

const ms = ktime.Time(ktime.Millisecond)

// newBroadcast builds a broadcast HPET over a 4-CPU C3STOP local device, all
// channels in ONESHOT mode.
func newBroadcast(t *testing.T) (*Broadcast, *Device, *fakeDev, *Device, *fakeDev) {
	t.Helper()
	bc, bcf := newDevice(hpetSpec, 1500, Options{})
	local, lf := newDevice(lapicSpec, 60, Options{})
	b, err := NewBroadcast(bc, 0, local)
	if err != nil {
		t.Fatal(err)
	}
	return b, bc, bcf, local, lf
}

// TestBroadcastHandoff is scenario 10 of
// docs/reference/hrtimer-clockevents.md, following tick-broadcast.c (v6.12).
func TestBroadcastHandoff(t *testing.T) {
	const a, b2, handler = 0, 1, 2
	br, bc, bcf, local, lf := newBroadcast(t)

	// CPU B sleeps first with its event at +8 ms: the broadcast is armed for it.
	local.Program(b2, 0, 8*ms, false)
	if r := br.Enter(b2, 0); !r.Handled || r.Program.Writes != 1 {
		t.Fatalf("Enter(B) = %+v, want the broadcast device armed", r)
	}
	if bc.NextEvent(0) != 8*ms {
		t.Fatalf("broadcast next_event = %v, want 8ms", bc.NextEvent(0))
	}

	// CPU A (next event +5 ms) enters deep idle: one HPET write to +5 ms and
	// A's local device shut down.
	local.Program(a, 0, 5*ms, false)
	lf.writes, bcf.writes = nil, nil
	r := br.Enter(a, 0)
	if !r.Handled || !r.LocalStopped || r.Busy || r.Program.Writes != 1 || len(bcf.writes) != 1 {
		t.Fatalf("Enter(A) = %+v, want local shutdown and one broadcast write", r)
	}
	if local.State(a) != sdk.StateShutdown || local.NextEvent(a) != 5*ms || local.FireAt(a) != ktime.Max {
		t.Errorf("A local: state %v next %v fire %v, want shutdown, next_event kept at 5ms, no fire", local.State(a), local.NextEvent(a), local.FireAt(a))
	}
	if bc.NextEvent(0) != 5*ms || br.TargetCPU() != a {
		t.Errorf("broadcast next_event %v target %d, want 5ms on CPU A", bc.NextEvent(0), br.TargetCPU())
	}
	if r.Cost != 7+1500 { // local shutdown + the HPET write
		t.Errorf("Enter(A) cost = %d, want %d", r.Cost, 7+1500)
	}

	// A second Enter without Exit changes nothing.
	if r := br.Enter(a, ms); r.Handled || r.Program.Writes != 0 {
		t.Errorf("repeated Enter(A) = %+v, want nothing", r)
	}

	t.Run("broadcast fires", func(t *testing.T) {
		br, bc, bcf, local, lf := cloneScenario(t)
		bcf.writes = nil
		h := br.HandleInterrupt(handler, 5*ms)
		if !reflect.DeepEqual(h.IPIs, []int{a}) || h.Local {
			t.Fatalf("HandleInterrupt = %+v, want an IPI to A only", h)
		}
		if !br.Pending(a) {
			t.Errorf("A not in the pending mask")
		}
		// Rearmed for B's 8 ms event.
		if h.Program.Writes != 1 || bc.NextEvent(0) != 8*ms || br.TargetCPU() != b2 {
			t.Errorf("rearm = %+v next %v target %d, want 8ms for B", h.Program, bc.NextEvent(0), br.TargetCPU())
		}
		// A's idle exit sees the pending bit: no local write.
		lf.writes = nil
		x := br.Exit(a, 5*ms+2000)
		if !x.Handled || !x.Pending || x.Program.Writes != 0 || len(lf.writes) != 0 {
			t.Errorf("Exit(A) = %+v, want pending, no local write", x)
		}
		if br.Pending(a) || br.InMask(a) || local.State(a) != sdk.StateOneshot {
			t.Errorf("after Exit(A): pending %v mask %v state %v, want cleared, oneshot", br.Pending(a), br.InMask(a), local.State(a))
		}
	})

	t.Run("woken early with expired event", func(t *testing.T) {
		br, _, _, _, lf := cloneScenario(t)
		lf.writes = nil
		// A wakes for another reason at +6 ms; the broadcast has not run.
		x := br.Exit(a, 6*ms)
		if !x.Handled || x.Pending || !x.Forced || x.Program.Writes != 0 || len(lf.writes) != 0 {
			t.Fatalf("Exit(A, 6ms) = %+v, want the force bit and no local write", x)
		}
		if !br.Forced(a) {
			t.Fatalf("A not in the force mask")
		}
		// Re-entering deep idle now is busy: the IPI is imminent.
		if r := br.Enter(a, 6*ms+1000); !r.Busy {
			t.Errorf("Enter(A) with force bit = %+v, want busy", r)
		}
		// The broadcast handler runs A's event through the force mask.
		h := br.HandleInterrupt(handler, 6*ms+5000)
		if !reflect.DeepEqual(h.IPIs, []int{a}) || br.Forced(a) {
			t.Errorf("HandleInterrupt = %+v forced %v, want IPI to A and force mask cleared", h, br.Forced(a))
		}
	})

	t.Run("handler CPU runs its own event locally", func(t *testing.T) {
		br, _, _, _, _ := cloneScenario(t)
		h := br.HandleInterrupt(a, 5*ms)
		if len(h.IPIs) != 0 || !h.Local || br.Pending(a) {
			t.Errorf("HandleInterrupt on A = %+v pending %v, want local handling, no IPI, not pending", h, br.Pending(a))
		}
	})

	t.Run("woken by something else before its event", func(t *testing.T) {
		br, _, _, local, lf := cloneScenario(t)
		lf.writes = nil
		x := br.Exit(a, 1*ms)
		if !x.Handled || x.Pending || x.Forced || x.Program.Writes != 1 || len(lf.writes) != 1 {
			t.Fatalf("Exit(A, 1ms) = %+v, want one local write", x)
		}
		if local.FireAt(a) == ktime.Max || local.NextEvent(a) != 5*ms {
			t.Errorf("A local fire %v next %v, want armed for 5ms", local.FireAt(a), local.NextEvent(a))
		}
	})
	_ = lf
}

// cloneScenario rebuilds the state of TestBroadcastHandoff after both CPUs
// entered (each subtest mutates its own copy).
func cloneScenario(t *testing.T) (*Broadcast, *Device, *fakeDev, *Device, *fakeDev) {
	br, bc, bcf, local, lf := newBroadcast(t)
	local.Program(1, 0, 8*ms, false)
	br.Enter(1, 0)
	local.Program(0, 0, 5*ms, false)
	br.Enter(0, 0)
	return br, bc, bcf, local, lf
}

// TestBroadcastNotNeeded: a local device that keeps running in deep idle
// (ARAT, no C3STOP) never enters the broadcast mask.
func TestBroadcastNotNeeded(t *testing.T) {
	arat := lapicSpec
	arat.Features &^= sdk.FeatC3Stop
	bc, _ := newDevice(hpetSpec, 1500, Options{})
	local, _ := newDevice(arat, 60, Options{})
	b, err := NewBroadcast(bc, 0, local)
	if err != nil {
		t.Fatal(err)
	}
	local.Program(0, 0, 5*ms, false)
	if r := b.Enter(0, 0); r.Handled || r.LocalStopped || b.InMask(0) || local.State(0) != sdk.StateOneshot {
		t.Errorf("Enter(ARAT) = %+v, want no broadcast", r)
	}
}

// TestBroadcastEligibility checks tick_check_broadcast_device()'s rules.
func TestBroadcastEligibility(t *testing.T) {
	local, _ := newDevice(lapicSpec, 60, Options{})
	if _, err := NewBroadcast(local, 0, local); err == nil {
		t.Errorf("NewBroadcast(per-CPU C3STOP device) = nil error, want ErrNotBroadcast")
	}
	bc, _ := newDevice(hpetSpec, 1500, Options{})
	if _, err := NewBroadcast(bc, 0, bc); err == nil {
		t.Errorf("NewBroadcast(local = global device) = nil error, want ErrNotLocal")
	}
}

// TestBroadcastAllocs: the broadcast paths allocate nothing.
func TestBroadcastAllocs(t *testing.T) {
	br, _, bcf, local, lf := newBroadcast(t)
	bcf.writes = make([]fakeWrite, 0, 8192)
	lf.writes = make([]fakeWrite, 0, 8192)
	now := ms
	allocs := testing.AllocsPerRun(500, func() {
		bcf.writes, lf.writes = bcf.writes[:0], lf.writes[:0]
		local.Program(0, now, now.Add(int64(ms)), false)
		local.Program(1, now, now.Add(2*int64(ms)), false)
		br.Enter(0, now)
		br.Enter(1, now)
		br.HandleInterrupt(2, now.Add(int64(ms)))
		br.Exit(0, now.Add(int64(ms)))
		br.Exit(1, now.Add(int64(ms)))
	})
	if allocs != 0 {
		t.Errorf("broadcast cycle allocs = %v, want 0", allocs)
	}
}
