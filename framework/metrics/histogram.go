// Package metrics holds the value types tickemu reports: latency histograms and
// ordered counter sets, with encoders whose output is stable byte for byte.
package metrics

import (
	"iter"
	"math"
	"sort"
)

// Latency records latencies in nanoseconds: exact count, min, max and sum, plus a
// histogram of whole microseconds (cyclictest -h buckets) up to a cap, with an
// overflow count. Percentiles come from the microsecond buckets.
//
// The buckets are kept in chunks of chunkUS, allocated on first touch: a
// cyclictest thread's latencies are a few microseconds, and the 10,000
// buckets of its default histogram are nearly all empty (64 threads' dense
// counters were 5 MB a run). The first chunk, the head, is allocated by Init
// and reached by Add in line.
type Latency struct {
	Count    int64
	Min, Max int64
	Sum      int64
	Last     int64
	// head counts samples of i microseconds (ns/1000, truncated) for
	// i < chunkUS, also those at or past maxUS, which the readers count as
	// overflow; far holds the rest, nil until a sample past the head.
	head  *[chunkUS]int64
	far   *latencyFar
	maxUS int
}

// chunkUS is the buckets in one chunk of a Latency (512 bytes).
const chunkUS = 64

// latencyFar is a Latency's buckets past its head and its overflow.
type latencyFar struct {
	// chunks[i] holds the buckets i*chunkUS.., nil until one of them
	// counts a sample (chunks[0] stays nil: it is the head); the slice ends
	// at the farthest chunk touched.
	chunks []*[chunkUS]int64
	over   int64 // samples of maxUS microseconds or more, past the head
}

// NewLatency returns a histogram with microsecond buckets 0..maxUS-1.
func NewLatency(maxUS int) *Latency {
	h := new(Latency)
	h.Init(maxUS)
	return h
}

// Init makes h an empty histogram with microsecond buckets 0..maxUS-1 (for
// a Latency kept inside the object that records into it).
func (h *Latency) Init(maxUS int) {
	*h = Latency{Min: math.MaxInt64, head: new([chunkUS]int64), maxUS: max(maxUS, 0)}
}

// Add records one sample. Negative samples (a wakeup before its target, which the
// kernel never produces) are recorded as 0.
func (h *Latency) Add(ns int64) {
	// One unsigned test sends the negative and the far samples to addFar.
	if uint64(ns) >= chunkUS*1000 {
		h.addFar(ns)
		return
	}
	h.Count++
	h.Sum += ns
	h.Last = ns
	if ns < h.Min {
		h.Min = ns
	}
	if ns > h.Max {
		h.Max = ns
	}
	h.head[uint64(ns)/1000]++
}

// addFar is Add for a negative sample or one past the head.
func (h *Latency) addFar(ns int64) {
	ns = max(ns, 0)
	h.Count++
	h.Sum += ns
	h.Last = ns
	h.Min = min(h.Min, ns)
	h.Max = max(h.Max, ns)
	us := int(ns / 1000)
	if us < chunkUS {
		h.head[us]++
		return
	}
	f := h.far
	if f == nil {
		f = new(latencyFar)
		h.far = f
	}
	if us >= h.maxUS {
		f.over++
		return
	}
	i := us / chunkUS
	if i >= len(f.chunks) {
		c := make([]*[chunkUS]int64, i+1, max(i+1, 2*cap(f.chunks)))
		copy(c, f.chunks)
		f.chunks = c
	}
	if f.chunks[i] == nil {
		f.chunks[i] = new([chunkUS]int64)
	}
	f.chunks[i][us%chunkUS]++
}

// Avg is the mean in ns (0 when empty).
func (h *Latency) Avg() float64 {
	if h.Count == 0 {
		return 0
	}
	return float64(h.Sum) / float64(h.Count)
}

// MinOrZero is Min, or 0 when empty.
func (h *Latency) MinOrZero() int64 {
	if h.Count == 0 {
		return 0
	}
	return h.Min
}

// chunk returns the chunk of buckets i*chunkUS.., nil when none of them
// has a sample.
func (h *Latency) chunk(i int) *[chunkUS]int64 {
	if i == 0 {
		return h.head
	}
	if h.far == nil || i >= len(h.far.chunks) {
		return nil
	}
	return h.far.chunks[i]
}

// Bucket returns the count of the bucket of us microseconds (0 outside
// 0..maxUS-1).
func (h *Latency) Bucket(us int) int64 {
	if us < 0 || us >= h.maxUS {
		return 0
	}
	if c := h.chunk(us / chunkUS); c != nil {
		return c[us%chunkUS]
	}
	return 0
}

// Buckets yields the non-empty buckets, microseconds and count, in
// increasing order.
func (h *Latency) Buckets() iter.Seq2[int, int64] {
	return func(yield func(int, int64) bool) {
		for i := 0; i*chunkUS < h.maxUS; i++ {
			c := h.chunk(i)
			if c == nil {
				if h.far == nil || i >= len(h.far.chunks) {
					return
				}
				continue
			}
			for j, n := range c[:min(chunkUS, h.maxUS-i*chunkUS)] {
				if n != 0 && !yield(i*chunkUS+j, n) {
					return
				}
			}
		}
	}
}

// Overflow returns the number of samples past the last bucket.
func (h *Latency) Overflow() int64 {
	var n int64
	if h.far != nil {
		n = h.far.over
	}
	for _, c := range h.head[min(h.maxUS, chunkUS):] {
		n += c
	}
	return n
}

// PercentileUS returns the smallest bucket (in us) at or below which fraction p of
// the samples fall; Max/1000 when p falls in the overflow.
func (h *Latency) PercentileUS(p float64) int64 {
	if h.Count == 0 {
		return 0
	}
	need := int64(math.Ceil(p * float64(h.Count)))
	if need <= 0 && h.maxUS > 0 {
		return 0 // bucket 0 holds at least none of them
	}
	var acc int64
	for us, n := range h.Buckets() {
		acc += n
		if acc >= need {
			return int64(us)
		}
	}
	return h.Max / 1000
}

// Dist is a distribution of integer values kept exactly (for small sample counts
// such as catch-up gaps): count, min, max, sum and the sorted samples' quantiles.
type Dist struct {
	vals   []int64
	sorted bool
}

// Add records v.
func (d *Dist) Add(v int64) { d.vals = append(d.vals, v); d.sorted = false }

// Count is the number of samples.
func (d *Dist) Count() int { return len(d.vals) }

// Quantile returns the q-quantile (nearest rank), 0 when empty.
func (d *Dist) Quantile(q float64) int64 {
	if len(d.vals) == 0 {
		return 0
	}
	if !d.sorted {
		sort.Slice(d.vals, func(i, j int) bool { return d.vals[i] < d.vals[j] })
		d.sorted = true
	}
	i := int(math.Ceil(q*float64(len(d.vals)))) - 1
	if i < 0 {
		i = 0
	}
	return d.vals[i]
}

// Max returns the largest sample, 0 when empty.
func (d *Dist) Max() int64 { return d.Quantile(1) }

// Sum returns the sum of the samples.
func (d *Dist) Sum() int64 {
	var s int64
	for _, v := range d.vals {
		s += v
	}
	return s
}
