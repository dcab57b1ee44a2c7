package hrtimer

import (
	"testing"
	"unsafe"
)

// TestCPUBaseLayout checks cpuBase's layout: 512 bytes (a whole number of
// cache lines, so the bases allocated side by side each start on a line), the
// next-event caches and flags in the first line, the Program buffers, the
// reclaim list, the hot counters and the CLOCK_MONOTONIC queue in the first
// four.
func TestCPUBaseLayout(t *testing.T) {
	var cb cpuBase
	if n := unsafe.Sizeof(cb); n != 512 {
		t.Errorf("cpuBase is %d bytes, want 512", n)
	}
	line0 := map[string]uintptr{
		"expiresNext": unsafe.Offsetof(cb.expiresNext), "nextTimer": unsafe.Offsetof(cb.nextTimer),
		"softirqExpiresNext": unsafe.Offsetof(cb.softirqExpiresNext), "cpu": unsafe.Offsetof(cb.cpu),
		"cwsSeq": unsafe.Offsetof(cb.cwsSeq), "activeBases": unsafe.Offsetof(cb.activeBases),
		"hangDetected": unsafe.Offsetof(cb.hangDetected), "softirqActivated": unsafe.Offsetof(cb.softirqActivated),
		"nrEvents": unsafe.Offsetof(cb.nrEvents),
	}
	for name, off := range line0 {
		if off >= 64 {
			t.Errorf("%s at offset %d, want it in the first line", name, off)
		}
	}
	hot := map[string]uintptr{
		"opProg":            unsafe.Offsetof(cb.opProg) + unsafe.Sizeof(cb.opProg),
		"irqProg":           unsafe.Offsetof(cb.irqProg) + unsafe.Sizeof(cb.irqProg),
		"irqExp":            unsafe.Offsetof(cb.irqExp) + unsafe.Sizeof(cb.irqExp),
		"reclaim":           unsafe.Offsetof(cb.reclaim) + unsafe.Sizeof(cb.reclaim),
		"stats.retryPasses": unsafe.Offsetof(cb.stats) + unsafe.Offsetof(cb.stats.retryPasses) + 8,
		"bases[0]":          unsafe.Offsetof(cb.bases) + unsafe.Sizeof(cb.bases[0]),
	}
	for name, end := range hot {
		if end > 4*64 {
			t.Errorf("%s ends at offset %d, want it in the first four lines", name, end)
		}
	}
}
