package metrics

import (
	"math"
	"math/rand"
	"reflect"
	"testing"
)

// denseLatency is the histogram Latency replaces, kept as the reference:
// every bucket in one slice, the overflow after them.
type denseLatency struct {
	counts []int64
	over   int64
}

func (d *denseLatency) add(ns int64) {
	us := max(ns, 0) / 1000
	if us < int64(len(d.counts)) {
		d.counts[us]++
	} else {
		d.over++
	}
}

// percentileUS is the dense histogram's PercentileUS.
func (d *denseLatency) percentileUS(p float64, count, maxNS int64) int64 {
	if count == 0 {
		return 0
	}
	need := int64(math.Ceil(p * float64(count)))
	var acc int64
	for i, n := range d.counts {
		acc += n
		if acc >= need {
			return int64(i)
		}
	}
	return maxNS / 1000
}

func TestLatency(t *testing.T) {
	h := NewLatency(10)
	for _, ns := range []int64{1500, 2500, 2600, -4, 25000} {
		h.Add(ns)
	}
	if h.Count != 5 || h.Min != 0 || h.Max != 25000 || h.Last != 25000 || h.Sum != 31600 {
		t.Errorf("Count, Min, Max, Last, Sum = %d, %d, %d, %d, %d; want 5, 0, 25000, 25000, 31600", h.Count, h.Min, h.Max, h.Last, h.Sum)
	}
	if b := [...]int64{h.Bucket(0), h.Bucket(1), h.Bucket(2), h.Bucket(3)}; b != [4]int64{1, 1, 2, 0} || h.Overflow() != 1 {
		t.Errorf("buckets %v overflow %d; want [1 1 2 0] and 1", b, h.Overflow())
	}
	if p := h.PercentileUS(0.5); p != 2 {
		t.Errorf("PercentileUS(0.5) = %d, want 2", p)
	}
	// A histogram kept by value: Init makes it empty (a used one too).
	var v Latency
	empty := Latency{Min: math.MaxInt64, head: new([chunkUS]int64), maxUS: 10}
	for round := 0; round < 2; round++ {
		v.Init(10)
		if !reflect.DeepEqual(v, empty) {
			t.Fatalf("round %d: Init(10) = %+v, want %+v", round, v, empty)
		}
		for _, ns := range []int64{1500, 2500, 2600, -4, 25000} {
			v.Add(ns)
		}
		if !reflect.DeepEqual(v, *h) {
			t.Errorf("round %d: after the same samples %+v, want %+v", round, v, *h)
		}
	}
}

// TestLatencyBuckets compares the chunked histogram with the dense one on
// samples at the edges of the microseconds, of the chunks and of the cap,
// and on random ones: every bucket, the non-empty ones in order, the
// overflow and the percentiles.
func TestLatencyBuckets(t *testing.T) {
	edges := func(maxUS int64) []int64 {
		var s []int64
		for _, us := range []int64{0, 1, chunkUS - 1, chunkUS, chunkUS + 1, 2*chunkUS - 1, 2 * chunkUS, 5*chunkUS + 3, maxUS - 1, maxUS, maxUS + 1, 3 * maxUS} {
			if us >= 0 {
				s = append(s, us*1000, us*1000+999, us*1000-1)
			}
		}
		return append(s, -1, -1000, -5000, math.MaxInt64/2)
	}
	random := func(maxUS int64) []int64 {
		r := rand.New(rand.NewSource(maxUS))
		s := make([]int64, 3000)
		for i := range s {
			switch i % 3 {
			case 0:
				s[i] = r.Int63n(80_000) // mostly the head
			case 1:
				s[i] = r.Int63n((maxUS + 2*chunkUS) * 1000) // any bucket, some past the cap
			default:
				s[i] = r.Int63n(3000) + 1000*int64(r.Intn(4))*chunkUS // around chunk starts
			}
		}
		return s
	}
	for _, maxUS := range []int64{0, 1, 10, chunkUS - 1, chunkUS, chunkUS + 1, 2*chunkUS - 1, 2 * chunkUS, 2*chunkUS + 1, 1000, 10000} {
		for name, samples := range map[string][]int64{"edges": edges(maxUS), "random": random(maxUS)} {
			h := NewLatency(int(maxUS))
			d := denseLatency{counts: make([]int64, maxUS)}
			var sum int64
			for _, ns := range samples {
				h.Add(ns)
				d.add(ns)
				sum += max(ns, 0)
			}
			if h.Count != int64(len(samples)) || h.Sum != sum || h.Last != max(samples[len(samples)-1], 0) {
				t.Errorf("maxUS %d %s: Count, Sum, Last = %d, %d, %d; want %d, %d, %d", maxUS, name, h.Count, h.Sum, h.Last, len(samples), sum, max(samples[len(samples)-1], 0))
			}
			for us := -1; us < int(maxUS)+2*chunkUS; us++ {
				want := int64(0)
				if us >= 0 && us < int(maxUS) {
					want = d.counts[us]
				}
				if got := h.Bucket(us); got != want {
					t.Errorf("maxUS %d %s: Bucket(%d) = %d, want %d", maxUS, name, us, got, want)
				}
			}
			var got, want [][2]int64
			for us, n := range h.Buckets() {
				got = append(got, [2]int64{int64(us), n})
			}
			for us, n := range d.counts {
				if n != 0 {
					want = append(want, [2]int64{int64(us), n})
				}
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("maxUS %d %s: Buckets() = %v\nwant %v", maxUS, name, got, want)
			}
			if h.Overflow() != d.over {
				t.Errorf("maxUS %d %s: Overflow() = %d, want %d", maxUS, name, h.Overflow(), d.over)
			}
			for _, p := range []float64{-1, 0, 1e-9, 0.01, 0.5, 0.9, 0.99, 0.999, 1, 1.5} {
				if got, want := h.PercentileUS(p), d.percentileUS(p, h.Count, h.Max); got != want {
					t.Errorf("maxUS %d %s: PercentileUS(%v) = %d, want %d", maxUS, name, p, got, want)
				}
			}
		}
	}
}

// TestLatencyBucketsStop: the loop over the buckets can stop early.
func TestLatencyBucketsStop(t *testing.T) {
	h := NewLatency(1000)
	for _, us := range []int64{3, 70, 500, 900} {
		h.Add(us * 1000)
	}
	var seen []int
	for us := range h.Buckets() {
		seen = append(seen, us)
		if us == 70 {
			break
		}
	}
	if !reflect.DeepEqual(seen, []int{3, 70}) {
		t.Errorf("stopped at 70 after %v, want [3 70]", seen)
	}
}

// TestLatencyAllocs: a histogram allocates its head on Init, nothing for a
// sample under chunkUS microseconds, and a chunk (with the chunk list, the
// first time) for one past it.
func TestLatencyAllocs(t *testing.T) {
	var h Latency
	if n := testing.AllocsPerRun(10, func() { h.Init(10000) }); n != 1 {
		t.Errorf("Init allocates %v times, want 1", n)
	}
	if n := testing.AllocsPerRun(10, func() { h.Add(3500); h.Add(-1); h.Add(chunkUS*1000 - 1) }); n != 0 {
		t.Errorf("Add in the head allocates %v times, want 0", n)
	}
	if n := testing.AllocsPerRun(10, func() { h.Init(10000); h.Add(9999_000) }); n != 4 {
		t.Errorf("Init and a far sample allocate %v times, want 4 (the head, the far part, its chunk list, the chunk)", n)
	}
	if n := testing.AllocsPerRun(10, func() { h.Add(9990_000); h.Add(20_000_000) }); n != 0 {
		t.Errorf("a sample in a touched chunk or past the cap allocates %v times, want 0", n)
	}
}

// TestLatencyNoBuckets: a histogram without buckets counts every sample as
// overflow.
func TestLatencyNoBuckets(t *testing.T) {
	h := NewLatency(0)
	h.Add(0)
	h.Add(5000)
	h.Add(100_000)
	if h.Overflow() != 3 || h.Bucket(0) != 0 {
		t.Errorf("NewLatency(0): bucket 0 %d overflow %d, want 0 and 3", h.Bucket(0), h.Overflow())
	}
	for us, n := range h.Buckets() {
		t.Errorf("NewLatency(0) has bucket %d (%d)", us, n)
	}
}
