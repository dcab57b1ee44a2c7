package kernel

import (
	"testing"
	"unsafe"
)

// TestHRTimerLayout checks HRTimer's layout: 128 bytes (a size class whose
// objects start on a cache line), with every field hrStart, hrCancel and
// runHRExpiries use outside tracing in the first 64.
func TestHRTimerLayout(t *testing.T) {
	var h HRTimer
	if n := unsafe.Sizeof(h); n != 128 {
		t.Errorf("HRTimer is %d bytes, want 128", n)
	}
	for _, f := range []struct {
		name      string
		off, size uintptr
	}{
		{"ID", unsafe.Offsetof(h.ID), unsafe.Sizeof(h.ID)}, {"Clock", unsafe.Offsetof(h.Clock), unsafe.Sizeof(h.Clock)},
		{"Cost", unsafe.Offsetof(h.Cost), 8}, {"Period", unsafe.Offsetof(h.Period), 8},
		{"Callback", unsafe.Offsetof(h.Callback), 8}, {"wake", unsafe.Offsetof(h.wake), 8},
		{"expires", unsafe.Offsetof(h.expires), 8},
		{"Mode", unsafe.Offsetof(h.Mode), unsafe.Sizeof(h.Mode)}, {"cpu", unsafe.Offsetof(h.cpu), 2},
		{"queued", unsafe.Offsetof(h.queued), 1},
	} {
		if f.off+f.size > 64 {
			t.Errorf("HRTimer.%s at [%d, %d), want it in the first 64 bytes", f.name, f.off, f.off+f.size)
		}
	}
}
