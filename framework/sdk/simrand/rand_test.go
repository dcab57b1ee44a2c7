package simrand

import "testing"

func TestRandStreams(t *testing.T) {
	a, b := New(1, "x"), New(1, "x")
	c := New(1, "y")
	same, diff := true, false
	for i := 0; i < 100; i++ {
		va, vb, vc := a.Uint64(), b.Uint64(), c.Uint64()
		same = same && va == vb
		diff = diff || va != vc
	}
	if !same || !diff {
		t.Errorf("streams: same seed and name equal = %v, other name differs = %v; want true, true", same, diff)
	}
	r := New(7, "n")
	for i := 0; i < 1000; i++ {
		if v := r.Int63n(10); v < 0 || v >= 10 {
			t.Fatalf("Int63n(10) = %d", v)
		}
		if f := r.Float64(); f < 0 || f >= 1 {
			t.Fatalf("Float64() = %g", f)
		}
		if j := r.Jitter(1000, 0.25); j < 750 || j > 1250 {
			t.Fatalf("Jitter(1000, 0.25) = %d", j)
		}
	}
}

// TestSequenceFixed pins the first numbers of a stream: results recorded
// with a seed must stay reproducible, so the sequence is part of the SDK's
// promise and may never change.
func TestSequenceFixed(t *testing.T) {
	r := New(1, "hpet/broadcast/smi")
	got := []uint64{r.Uint64(), r.Uint64(), r.Uint64()}
	want := []uint64{7906785300730433600, 9507820550917856585, 8862123538589631028}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("New(1, hpet/broadcast/smi) draws %d, want %d", got, want)
		}
	}
}
