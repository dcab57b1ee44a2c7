package workload

import (
	"testing"
	"unsafe"
)

// heapThreads keeps TestCtThreadLayout's threads on the heap, where Setup
// puts them.
var heapThreads []*ctThread

// TestCtThreadLayout: a cyclictest thread is 192 bytes (a size class whose
// objects start on a cache line: checked on heap objects), the loop's state
// with the sleep it rewrites in its first line and the histogram's counters
// in the second, the cold fields after them.
func TestCtThreadLayout(t *testing.T) {
	var st ctThread
	if n := unsafe.Sizeof(st); n != 192 {
		t.Errorf("ctThread is %d bytes, want 192", n)
	}
	for i := 0; i < 8; i++ {
		heapThreads = append(heapThreads, new(ctThread))
		if a := uintptr(unsafe.Pointer(heapThreads[i])) % 64; a != 0 {
			t.Errorf("a heap ctThread starts at offset %d of its cache line", a)
		}
	}
	for _, f := range []struct {
		name     string
		off, end uintptr
	}{
		{"w..sleep", unsafe.Offsetof(st.w), unsafe.Offsetof(st.sleep) + unsafe.Sizeof(st.sleep)},
		{"lat", unsafe.Offsetof(st.lat), unsafe.Offsetof(st.lat) + unsafe.Sizeof(st.lat)},
	} {
		if f.off/64 != (f.end-1)/64 {
			t.Errorf("%s spans bytes %d..%d, more than one cache line", f.name, f.off, f.end)
		}
	}
	if unsafe.Offsetof(st.worst) < unsafe.Offsetof(st.lat) {
		t.Errorf("the cold fields come before the histogram")
	}
}
