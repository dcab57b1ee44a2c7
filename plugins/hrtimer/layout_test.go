package hrtimer

import (
	"testing"
	"unsafe"

	"github.com/tickemu/tickemu/framework/sdk"
	"github.com/tickemu/tickemu/framework/sdk/ktime"
)

// TestCPUBaseLayout checks cpuBase's layout: 576 bytes (a whole number of
// cache lines, so the bases allocated side by side each start on a line);
// what Start reads and writes in lines 0 (next-event caches, the first
// device write of an operation, flags and counts) and 2 (the CLOCK_MONOTONIC
// queue, its first heap array, Start's counters); what the interrupt adds in
// line 1 (its first expiry and device write, the hard expiry count).
func TestCPUBaseLayout(t *testing.T) {
	var cb cpuBase
	if n := unsafe.Sizeof(cb); n != 576 {
		t.Errorf("cpuBase is %d bytes, want 576", n)
	}
	type field struct {
		name      string
		off, size uintptr
	}
	lines := [][]field{
		{{"expiresNext", unsafe.Offsetof(cb.expiresNext), 8}, {"nextTimer", unsafe.Offsetof(cb.nextTimer), 8},
			{"softirqExpiresNext", unsafe.Offsetof(cb.softirqExpiresNext), 8}, {"softirqNextTimer", unsafe.Offsetof(cb.softirqNextTimer), 8},
			{"opFirst", unsafe.Offsetof(cb.opFirst), 8}, {"cwsSeq", unsafe.Offsetof(cb.cwsSeq), 4},
			{"nrEvents", unsafe.Offsetof(cb.nrEvents), 4}, {"cpu", unsafe.Offsetof(cb.cpu), 4},
			{"nReclaim", unsafe.Offsetof(cb.nReclaim), 2}, {"activeBases", unsafe.Offsetof(cb.activeBases), 1},
			{"inHrtirq", unsafe.Offsetof(cb.inHrtirq), 1}, {"hangDetected", unsafe.Offsetof(cb.hangDetected), 1},
			{"softirqActivated", unsafe.Offsetof(cb.softirqActivated), 1}, {"tryPending", unsafe.Offsetof(cb.tryPending), 1},
		},
		{{"expFirst", unsafe.Offsetof(cb.expFirst), unsafe.Sizeof(cb.expFirst)}, {"irqFirst", unsafe.Offsetof(cb.irqFirst), 8},
			{"expiriesHard", unsafe.Offsetof(cb.expiriesHard), 8}},
		{{"monoBuf", unsafe.Offsetof(cb.monoBuf), unsafe.Sizeof(cb.monoBuf)},
			{"starts", unsafe.Offsetof(cb.starts), 8}, {"deviceWrites", unsafe.Offsetof(cb.deviceWrites), 8},
			{"bases[0]", unsafe.Offsetof(cb.bases), unsafe.Sizeof(cb.bases[0])}},
	}
	for i, l := range lines {
		for _, f := range l {
			if f.off < uintptr(64*i) || f.off+f.size > uintptr(64*(i+1)) {
				t.Errorf("%s at [%d, %d), want it in line %d [%d, %d)", f.name, f.off, f.off+f.size, i, 64*i, 64*(i+1))
			}
		}
	}
}

// TestInlineLists checks the lists whose first entry is kept in the CPU's
// record: the Program buffers of both call families and the expiry list
// give every entry in order across the move to the overflow buffer, each
// call starts them empty, and a one-entry list is the inline entry.
func TestInlineLists(t *testing.T) {
	p := &Plugin{cpus: newCPUBases(1)}
	cb := p.cpus[0]
	for round := range 2 { // the second round reuses the overflow buffers
		for n := 0; n <= 4; n++ {
			var want []ktime.Time
			for i := range n {
				want = append(want, ktime.Time(100*round+i))
			}
			p.beginOp(cb)
			for _, e := range want {
				p.write(cb, e)
			}
			op := p.prog
			p.endCall()
			p.beginIRQ(cb)
			for _, e := range want {
				p.write(cb, e+1000)
				p.growExpiriesIfFull(cb)
				p.exp = p.exp[:len(p.exp)+1]
				p.exp[len(p.exp)-1] = sdk.HRExpiry{ID: sdk.TimerID(e), Now: e}
			}
			irq, exp := p.prog, p.exp
			p.endCall()
			if len(op) != n || len(irq) != n || len(exp) != n || op == nil || irq == nil || exp == nil {
				t.Fatalf("round %d, %d entries: lengths %d, %d, %d (nil %v %v %v)", round, n, len(op), len(irq), len(exp), op == nil, irq == nil, exp == nil)
			}
			if n == 1 && (&op[0] != &cb.opFirst[0] || &irq[0] != &cb.irqFirst[0] || &exp[0] != &cb.expFirst[0]) {
				t.Errorf("round %d: a one-entry list is not the entry inline in the record", round)
			}
			for i, e := range want {
				if op[i] != e || irq[i] != e+1000 || exp[i].ID != sdk.TimerID(e) || exp[i].Now != e {
					t.Errorf("round %d, %d entries: entry %d is %v, %v, %+v, want %v", round, n, i, op[i], irq[i], exp[i], e)
				}
			}
		}
	}
	if got := cb.deviceWrites; got != 2*2*(0+1+2+3+4) {
		t.Errorf("deviceWrites = %d, want %d", got, 2*2*(0+1+2+3+4))
	}
}

// TestTimerLayout checks timer's layout: 128 bytes (its size class starts
// objects on a cache line), every field but id in the first 64.
func TestTimerLayout(t *testing.T) {
	var tm timer
	if n := unsafe.Sizeof(tm); n != 128 {
		t.Errorf("timer is %d bytes, want 128", n)
	}
	if off := unsafe.Offsetof(tm.id); off != 64 {
		t.Errorf("timer.id at offset %d, want 64 (every other field in the first line)", off)
	}
}
