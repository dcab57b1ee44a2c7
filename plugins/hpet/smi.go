package hpet

import (
	"math"

	"github.com/tickemu/tickemu/framework/sdk/ktime"
	"github.com/tickemu/tickemu/framework/sdk/simrand"
)

// smiSource is a machine-wide Poisson stream of System Management Interrupts.
// Arrivals are drawn in order from a seeded stream; a programming consumes the
// arrivals up to its window, so the same calls in the same order see the same
// SMIs.
type smiSource struct {
	rng      *simrand.Rand
	meanNs   float64
	duration int64
	next     ktime.Time
}

func newSMISource(rng *simrand.Rand, perSec float64, duration int64) *smiSource {
	s := &smiSource{rng: rng, meanNs: 1e9 / perSec, duration: duration}
	s.next = s.draw(0)
	return s
}

// draw returns the arrival after t: exponential inter-arrival times.
func (s *smiSource) draw(t ktime.Time) ktime.Time {
	gap := -math.Log(1-s.rng.Float64()) * s.meanNs
	if gap >= float64(ktime.Max) {
		return ktime.Max
	}
	return t.Add(int64(gap) + 1)
}

// Delay implements Interference: an SMI pending when the counter read
// completes (arrived during [start, end)) is taken at that instruction
// boundary, before the comparator write; SMIs arriving while the CPU is in SMM
// are taken one after another.
func (s *smiSource) Delay(start, end ktime.Time) int64 {
	for s.next < start {
		s.next = s.draw(s.next)
	}
	var delay int64
	for s.next < end.Add(delay) {
		delay += s.duration
		s.next = s.draw(s.next)
	}
	return delay
}
