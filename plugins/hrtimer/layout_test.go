package hrtimer

import (
	"testing"
	"unsafe"
)

// TestCPUBaseLayout checks cpuBase's layout: 512 bytes (a whole number of
// cache lines, so the bases allocated side by side each start on a line);
// what Start reads and writes in lines 0 (next-event caches, Program buffer,
// flags) and 3 (the CLOCK_MONOTONIC queue, its first heap array, Start's
// counters); the other counters in line 1, the interrupt's buffers and its
// other fields in line 2.
func TestCPUBaseLayout(t *testing.T) {
	var cb cpuBase
	if n := unsafe.Sizeof(cb); n != 512 {
		t.Errorf("cpuBase is %d bytes, want 512", n)
	}
	type field struct {
		name      string
		off, size uintptr
	}
	lines := [][]field{
		{{"expiresNext", unsafe.Offsetof(cb.expiresNext), 8}, {"nextTimer", unsafe.Offsetof(cb.nextTimer), 8},
			{"softirqExpiresNext", unsafe.Offsetof(cb.softirqExpiresNext), 8}, {"softirqNextTimer", unsafe.Offsetof(cb.softirqNextTimer), 8},
			{"opProg", unsafe.Offsetof(cb.opProg), 24}, {"activeBases", unsafe.Offsetof(cb.activeBases), 1},
			{"inHrtirq", unsafe.Offsetof(cb.inHrtirq), 1}, {"hangDetected", unsafe.Offsetof(cb.hangDetected), 1},
			{"softirqActivated", unsafe.Offsetof(cb.softirqActivated), 1}, {"cpu", unsafe.Offsetof(cb.cpu), 4}},
		{{"stats", unsafe.Offsetof(cb.stats), unsafe.Sizeof(cb.stats)}, {"nReclaim", unsafe.Offsetof(cb.nReclaim), 2}},
		{{"irqProg", unsafe.Offsetof(cb.irqProg), 24}, {"irqExp", unsafe.Offsetof(cb.irqExp), 24},
			{"cwsSeq", unsafe.Offsetof(cb.cwsSeq), 8}, {"nrEvents", unsafe.Offsetof(cb.nrEvents), 4},
			{"tryPending", unsafe.Offsetof(cb.tryPending), 1}},
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
