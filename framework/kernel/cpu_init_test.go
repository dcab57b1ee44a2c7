package kernel

import (
	"testing"
	"unsafe"
)

// TestCPUsLineAligned checks that newCPUs makes and initialises every CPU,
// each starting on a cache line, on small and large machines (the CPU's
// layout, docs/architecture.md, holds only then).
func TestCPUsLineAligned(t *testing.T) {
	if n := unsafe.Sizeof(CPU{}); n%64 != 0 {
		t.Errorf("CPU is %d bytes, want a multiple of 64", n)
	}
	for _, n := range []int{1, 2, 3, 31, 32, 33, 64, 130} {
		k := &Kernel{}
		cpus := newCPUs(k, n, map[int]bool{1: true})
		if len(cpus) != n {
			t.Fatalf("newCPUs(%d) made %d CPUs", n, len(cpus))
		}
		for i, c := range cpus {
			if a := uintptr(unsafe.Pointer(c)); a%64 != 0 {
				t.Errorf("%d CPUs: cpu%d at %#x, %d bytes past a cache line", n, i, a, a%64)
			}
			if c.id != i || c.k != k || c.isNohzFull() != (i == 1) || c.idle.state != -1 {
				t.Errorf("%d CPUs: cpu%d initialised as id %d, nohz_full %v, idle state %d", n, i, c.id, c.isNohzFull(), c.idle.state)
			}
			// flags starts with nothing pending but the nohz_full= mask's bit.
			if want := map[bool]uint32{false: 0, true: flagNohzFull}[i == 1]; c.flags != want {
				t.Errorf("%d CPUs: cpu%d flags %#x, want %#x", n, i, c.flags, want)
			}
		}
	}
}
