package kernel

import (
	"testing"
	"unsafe"
)

// TestTaskLayout checks the Task's cache lines: its size class is a multiple
// of 64 bytes (so its lines are aligned), the segment and return fields
// share line 0, and the groups a cyclictest wakeup touches each stay in one
// line: the sleep with what its wakeup writes (hrtimer_wakeup(),
// Kernel.Wake), and the clock read's result with the sleep's request time.
func TestTaskLayout(t *testing.T) {
	var x Task
	if n := unsafe.Sizeof(x); n > 576 || n <= 512 {
		t.Errorf("Task is %d bytes, want 513..576 (the 576-byte size class)", n)
	}
	for _, g := range []struct {
		name     string
		off, end uintptr
	}{
		{"k..prog", unsafe.Offsetof(x.k), unsafe.Offsetof(x.prog) + unsafe.Sizeof(x.prog)},
		{"sleep..wakeBroadcast", unsafe.Offsetof(x.sleep), unsafe.Offsetof(x.wakeBroadcast) + 8},
		{"userRes..sleepReqT", unsafe.Offsetof(x.userRes), unsafe.Offsetof(x.sleepReqT) + 8},
	} {
		if g.off/64 != (g.end-1)/64 {
			t.Errorf("Task's %s spans bytes %d..%d, more than one cache line", g.name, g.off, g.end)
		}
	}
	if n := unsafe.Sizeof(x.sleep); n != 32 {
		t.Errorf("sleepState is %d bytes, want 32", n)
	}
}
