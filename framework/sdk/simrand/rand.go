// Package simrand is the seeded random source of a simulation: every stream is
// derived from the run seed and a stable name, so the same seed gives the same
// numbers in process and out of process, and adding a stream never shifts the
// numbers another stream draws. Plugins draw their randomness only from a
// stream named after themselves and Setup.Role (sdk.Setup.Seed); it is part
// of the SDK (see framework/sdk's compatibility promise), and its sequences
// are part of that promise: a seed's numbers never change.
package simrand

import "math"

// Rand is a small, fast, seeded generator (SplitMix64 stream, then xoshiro256**).
// Every random stream in a run is derived from the run seed and a stable name, so
// adding a stream never shifts the numbers another stream draws.
type Rand struct{ s [4]uint64 }

// New returns a generator for the stream name under seed.
func New(seed uint64, name string) *Rand {
	h := seed ^ 0x9E3779B97F4A7C15
	for i := 0; i < len(name); i++ { // FNV-1a over the name, folded into the seed
		h ^= uint64(name[i])
		h *= 0x100000001B3
	}
	r := &Rand{}
	for i := range r.s {
		h += 0x9E3779B97F4A7C15
		z := h
		z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
		z = (z ^ (z >> 27)) * 0x94D049BB133111EB
		r.s[i] = z ^ (z >> 31)
	}
	return r
}

func rotl(x uint64, k uint) uint64 { return (x << k) | (x >> (64 - k)) }

// Uint64 returns the next 64 random bits.
func (r *Rand) Uint64() uint64 {
	s := &r.s
	result := rotl(s[1]*5, 7) * 9
	t := s[1] << 17
	s[2] ^= s[0]
	s[3] ^= s[1]
	s[1] ^= s[2]
	s[0] ^= s[3]
	s[2] ^= t
	s[3] = rotl(s[3], 45)
	return result
}

// Int63n returns a uniform integer in [0, n). n must be positive.
func (r *Rand) Int63n(n int64) int64 {
	if n <= 0 {
		panic("simrand: Int63n with n <= 0")
	}
	max := uint64(math.MaxUint64 - math.MaxUint64%uint64(n))
	for {
		v := r.Uint64()
		if v < max {
			return int64(v % uint64(n))
		}
	}
}

// Float64 returns a uniform float in [0, 1).
func (r *Rand) Float64() float64 { return float64(r.Uint64()>>11) / (1 << 53) }

// Jitter returns d scaled by a uniform factor in [1-frac, 1+frac).
func (r *Rand) Jitter(d int64, frac float64) int64 {
	if frac <= 0 || d == 0 {
		return d
	}
	f := 1 - frac + 2*frac*r.Float64()
	return int64(math.Round(float64(d) * f))
}
