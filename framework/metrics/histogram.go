// Package metrics holds the value types tickemu reports: latency histograms and
// ordered counter sets, with encoders whose output is stable byte for byte.
package metrics

import (
	"math"
	"sort"
)

// Latency records latencies in nanoseconds: exact count, min, max and sum, plus a
// histogram of whole microseconds (cyclictest -h buckets) up to a cap, with an
// overflow count. Percentiles come from the microsecond buckets.
//
// It is 64 bytes, one cache line of its own (size class 64): Add runs once
// per cyclictest wakeup on a histogram untouched since that thread's last one.
type Latency struct {
	Count    int64
	Min, Max int64
	Sum      int64
	Last     int64
	// counts[i] counts samples of i microseconds (ns/1000, truncated) for
	// i < maxUS; its last element, counts[maxUS], the overflow.
	counts []int64
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
	*h = Latency{Min: math.MaxInt64, counts: make([]int64, maxUS+1)}
}

// Add records one sample. Negative samples (a wakeup before its target, which the
// kernel never produces) are recorded as 0.
func (h *Latency) Add(ns int64) {
	if ns < 0 {
		ns = 0
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
	h.counts[min(ns/1000, int64(len(h.counts)-1))]++
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

// Buckets returns the microsecond buckets (shared; do not modify) and the overflow count.
func (h *Latency) Buckets() ([]int64, int64) {
	n := len(h.counts) - 1
	return h.counts[:n:n], h.counts[n]
}

// PercentileUS returns the smallest bucket (in us) at or below which fraction p of
// the samples fall; Max/1000 when p falls in the overflow.
func (h *Latency) PercentileUS(p float64) int64 {
	if h.Count == 0 {
		return 0
	}
	need := int64(math.Ceil(p * float64(h.Count)))
	var acc int64
	b, _ := h.Buckets()
	for i, n := range b {
		acc += n
		if acc >= need {
			return int64(i)
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
