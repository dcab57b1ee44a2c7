package kernel

import (
	"testing"
	"unsafe"
)

// heapTasks keeps the tasks TestTaskLayout allocates on the heap, where
// Spawn puts every Task.
var heapTasks []*Task

// TestTaskLayout checks the Task's cache lines where the allocator really
// puts a Task: it measures the offset of a heap Task in its cache line (the
// 8-byte header Go puts in front of a pointerful object over 512 bytes), the
// same for every Task when the slot size is a multiple of 64, then checks
// that each group of fields a hot path touches stays in one line: the
// segment end and the return to user space (line 0), the signal state, the
// sleep with what its wakeup writes (hrtimer_wakeup(), Kernel.Wake), the
// scheduler's and the clock read's fields, each frame of frameBuf.
func TestTaskLayout(t *testing.T) {
	heapTasks = heapTasks[:0]
	for i := 0; i < 16; i++ {
		heapTasks = append(heapTasks, new(Task))
	}
	base := uintptr(unsafe.Pointer(heapTasks[0])) % 64
	for _, p := range heapTasks {
		if b := uintptr(unsafe.Pointer(p)) % 64; b != base {
			t.Fatalf("heap Tasks start at offsets %d and %d in their cache lines: the slot size is not a multiple of 64", base, b)
		}
	}
	var x Task
	line := func(off uintptr) uintptr { return (base + off) / 64 }
	for _, g := range []struct {
		name     string
		off, end uintptr
	}{
		{"k..prog", unsafe.Offsetof(x.k), unsafe.Offsetof(x.prog) + unsafe.Sizeof(x.prog)},
		{"Proc..segFn", unsafe.Offsetof(x.Proc), unsafe.Offsetof(x.segFn) + 8},
		{"sleep..wakeBroadcast", unsafe.Offsetof(x.sleep), unsafe.Offsetof(x.wakeBroadcast) + 8},
		{"runSince..sleepReqT", unsafe.Offsetof(x.runSince), unsafe.Offsetof(x.sleepReqT) + 8},
		{"frameBuf[0]", unsafe.Offsetof(x.frameBuf), unsafe.Offsetof(x.frameBuf) + unsafe.Sizeof(x.frameBuf[0])},
		{"frameBuf[1]", unsafe.Offsetof(x.frameBuf) + unsafe.Sizeof(x.frameBuf[0]), unsafe.Offsetof(x.frameBuf) + unsafe.Sizeof(x.frameBuf)},
		{"cont..Comm", unsafe.Offsetof(x.cont), unsafe.Offsetof(x.Comm) + unsafe.Sizeof(x.Comm)},
	} {
		if line(g.off) != line(g.end-1) {
			t.Errorf("Task's %s spans bytes %d..%d, lines %d..%d (the object starts at %d in its line)",
				g.name, g.off, g.end, line(g.off), line(g.end-1), base)
		}
	}
	if n := unsafe.Sizeof(x.sleep); n != 32 {
		t.Errorf("sleepState is %d bytes, want 32", n)
	}
}
