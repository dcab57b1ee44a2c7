package workload

import (
	"testing"
	"unsafe"
)

// TestCtThreadLayout: a cyclictest thread is 192 bytes (a size class whose
// objects start on a cache line), the loop's state in its first line and
// the histogram's counters in the second, the cold fields after the sleep.
func TestCtThreadLayout(t *testing.T) {
	var st ctThread
	if n := unsafe.Sizeof(st); n != 192 {
		t.Errorf("ctThread is %d bytes, want 192", n)
	}
	for _, f := range []struct {
		name     string
		off, end uintptr
	}{
		{"step..broadcast", unsafe.Offsetof(st.step), unsafe.Offsetof(st.broadcast) + 8},
		{"lat", unsafe.Offsetof(st.lat), unsafe.Offsetof(st.lat) + unsafe.Sizeof(st.lat)},
	} {
		if f.off/64 != (f.end-1)/64 {
			t.Errorf("%s spans bytes %d..%d, more than one cache line", f.name, f.off, f.end)
		}
	}
	if unsafe.Offsetof(st.start) < unsafe.Offsetof(st.sleep) {
		t.Errorf("the cold fields come before the sleep")
	}
}
