package kernel

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestUtilDecayIsExp2: every answer of updateUtil's decay table is, bit for
// bit, the float64 math.Exp2 gives for that interval: each interval from
// 1 ns to 1 ms (the idle intervals of a periodic task), random ones up to
// 10 s, the 64-CPU cyclictest's most frequent ones, and intervals that share
// a slot and evict each other, each asked several times in turn.
func TestUtilDecayIsExp2(t *testing.T) {
	slot := func(dt int64) uint64 { return uint64(dt) * 0x9e3779b97f4a7c15 >> (64 - utilDecayBits) }
	dts := []int64{199999, 200001, 199941, 199939, 184196, 170228, 1, 2, 3}
	// Intervals sharing the slot of 200001.
	for dt, n := int64(1), 0; n < 8; dt++ {
		if dt != 200001 && slot(dt) == slot(200001) {
			dts = append(dts, dt)
			n++
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 10000 {
		dts = append(dts, 1+rng.Int64N(10_000_000_000))
	}
	for dt := int64(1); dt <= 1_000_000; dt++ {
		dts = append(dts, dt)
	}
	var d utilDecay
	for round := range 3 {
		for _, dt := range dts {
			got, want := d.of(dt), math.Exp2(-float64(dt)/float64(utilHalfLife))
			if math.Float64bits(got) != math.Float64bits(want) {
				t.Fatalf("round %d: decay of %d ns = %v (%#x), math.Exp2 gives %v (%#x)", round, dt, got, math.Float64bits(got), want, math.Float64bits(want))
			}
		}
	}
}

// TestUtilShare: utilShare is the clamped quotient updateUtil used to
// compute, math.Min(math.Max(float64(d)/float64(dt), 0), 1), bit for bit:
// no task time, all of it, more (a clamp), negative, and everything between,
// for intervals from 1 ns to 10 s and task times near the interval and near
// the int64-to-float64 rounding steps.
func TestUtilShare(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var pairs [][2]int64
	for _, dt := range []int64{1, 2, 3, 7, 1000, 199999, 200001, 1 << 53, 1<<53 + 1, 1<<62 + 12345, math.MaxInt64} {
		for _, d := range []int64{math.MinInt64, -1, 0, 1, dt / 3, dt/2 + 1, dt - 1, dt, dt + 1, 2 * dt, math.MaxInt64} {
			pairs = append(pairs, [2]int64{d, dt})
		}
	}
	for range 200000 {
		dt := 1 + rng.Int64N(10_000_000_000)
		pairs = append(pairs, [2]int64{rng.Int64N(dt + dt/4 + 1), dt}, [2]int64{dt - rng.Int64N(64), dt})
	}
	for _, p := range pairs {
		d, dt := p[0], p[1]
		got, want := utilShare(d, dt), math.Min(math.Max(float64(d)/float64(dt), 0), 1)
		if math.Float64bits(got) != math.Float64bits(want) {
			t.Fatalf("utilShare(%d, %d) = %v (%#x), want %v (%#x)", d, dt, got, math.Float64bits(got), want, math.Float64bits(want))
		}
	}
}
