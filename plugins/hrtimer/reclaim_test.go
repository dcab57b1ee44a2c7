package hrtimer

import (
	"testing"

	"github.com/tickemu/tickemu/framework/sdk"
)

// tracked is how many timers p holds by id.
func (p *Plugin) tracked() int {
	n := len(p.sparse)
	for _, t := range p.byID {
		if t != nil {
			n++
		}
	}
	return n
}

// TestReclaimBoundsTimerMap checks that timers the host never uses again are
// recycled: a CPU that starts and cancels distinct IDs without interrupts,
// and one that expires many one-shot timers, both keep the timers tracked
// few, for dense ids (the slice) and sparse ones (the map) alike.
func TestReclaimBoundsTimerMap(t *testing.T) {
	for _, base := range []sdk.TimerID{0, denseIDs} {
		testReclaimBounds(t, base)
	}
}

func testReclaimBounds(t *testing.T, base sdk.TimerID) {
	p := configure(t, highRes(2), zeroCosts())
	for i := range 10000 {
		id := base + sdk.TimerID(i+1)
		p.Start(0, 0, hard(id), at(1*ms), 0)
		if res := p.Cancel(0, 0, id); res.Ret != 1 {
			t.Fatalf("Cancel(T%d) = %d, want 1", id, res.Ret)
		}
	}
	if n := p.tracked(); n > reclaimBatch+1 {
		t.Errorf("after 10000 start/cancel pairs the plugin tracks %d timers, want <= %d", n, reclaimBatch+1)
	}
	r := newRig(t, p)
	for i := range 5000 {
		r.start(1, 0, hard(base+sdk.TimerID(20000+i)), at(int64(i+1)*us), 0)
	}
	r.advance(at(10 * ms))
	if len(r.expired) != 5000 {
		t.Fatalf("expired %d timers, want 5000", len(r.expired))
	}
	r.start(1, at(11*ms), hard(base+99999), at(12*ms), 0)
	r.advance(at(13 * ms))
	if n := p.tracked(); n > reclaimBatch+2 {
		t.Errorf("after 5000 expiries the plugin tracks %d timers, want a handful", n)
	}
}

// TestReclaimKeepsReferencedTimer checks that a timer still named by a stale
// next_timer pointer (left by a remote cancel, as in the kernel) is not
// recycled until the pointer moves, and that its ID starts afresh afterwards.
func TestReclaimKeepsReferencedTimer(t *testing.T) {
	p := configure(t, highRes(2), zeroCosts())
	p.Start(0, 0, hard(1), at(1*ms), 0)
	p.Start(0, 0, hard(2), at(2*ms), 0)
	p.Cancel(1, 0, 1) // remote: cpu0's next_timer still points at T1
	t1 := p.lookup(1)
	p.reclaim(p.cpus[0], at(1*ms))
	if t1 == nil || p.lookup(1) != t1 || p.CPUState(0).NextTimer != 1 {
		t.Fatalf("T1 recycled while cpu0's next_timer still points at it")
	}
	ir := p.Interrupt(0, at(1*ms)) // the stale event re-evaluates: next_timer = T2
	if len(ir.Expired) != 0 || p.CPUState(0).NextTimer != 2 {
		t.Fatalf("stale interrupt = %+v, next_timer %d; want nothing expired and next_timer T2", ir, p.CPUState(0).NextTimer)
	}
	p.Interrupt(0, at(1500*us))
	// An interrupt recycles only once reclaimLazy timers are listed.
	p.reclaim(p.cpus[0], at(1500*us))
	if p.lookup(1) != nil {
		t.Errorf("T1 not recycled once unreferenced")
	}
	if res := p.Start(1, at(1500*us), hard(1), at(3*ms), 0); res.Ret != 0 || len(res.Program) != 1 {
		t.Errorf("Start of the recycled ID = %+v, want Ret 0 and one write", res)
	}
}

// TestReclaimLazy checks the interrupt's recycling bound: timers that expire
// once and are never started again are recycled once reclaimLazy of them are
// listed, so a CPU tracks fewer than 2*reclaimLazy of them at any time, while
// a timer started again before then is never recycled (its record is the same).
func TestReclaimLazy(t *testing.T) {
	p := configure(t, highRes(1), zeroCosts())
	r := newRig(t, p)
	r.start(0, 0, hard(1), at(1*us), 0)
	again := p.lookup(1)
	for i := range 1000 {
		now := at(int64(i+1) * us)
		r.advance(now)
		r.start(0, now, hard(1), now+at(1*us), 0) // started again at once
		r.start(0, now, hard(sdk.TimerID(100+i)), now+500, 0)
		if n := p.tracked(); n >= 2*reclaimLazy+1 {
			t.Fatalf("after %d one-shot expiries the plugin tracks %d timers, want < %d", i, n, 2*reclaimLazy+1)
		}
	}
	if len(r.expired) < 1900 {
		t.Fatalf("expired %d timers, want the 1000 one-shots and the re-started one each time", len(r.expired))
	}
	if p.lookup(1) != again {
		t.Errorf("the timer started again after each expiry was recycled")
	}
}
