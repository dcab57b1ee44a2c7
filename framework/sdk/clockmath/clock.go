package clockmath

import (
	"math/bits"

	"github.com/tickemu/tickemu/framework/sdk/ktime"
)

// Clock is a free-running hardware counter that started at 0 at boot (simulated
// time 0) and advances at Num/Den ticks per nanosecond: the TSC, an HPET main
// counter, the divided LAPIC bus clock, the ARM system counter. Conversions are
// exact integer arithmetic (128-bit intermediates), so a counter read and the
// time a comparator matches agree to the tick, whatever the rate.
//
// Invariant: Num > 0 and Den > 0; the zero Clock is invalid.
type Clock struct {
	Num, Den uint64
}

// ClockHz is a counter running at hz ticks per second.
func ClockHz(hz uint64) Clock { return Clock{Num: hz, Den: NsecPerSec} }

// ClockPeriodFs is a counter whose period is fs femtoseconds, as the HPET
// reports it in its capabilities register (HPET_PERIOD).
func ClockPeriodFs(fs uint64) Clock { return Clock{Num: 1_000_000, Den: fs} }

// TicksAt is the counter value at simulated time t (floor(t*Num/Den)); 0 for
// t <= 0, ^0 when the value does not fit 64 bits.
func (c Clock) TicksAt(t ktime.Time) uint64 {
	if t <= 0 {
		return 0
	}
	hi, lo := bits.Mul64(uint64(t), c.Num)
	if hi >= c.Den {
		return ^uint64(0)
	}
	q, _ := bits.Div64(hi, lo, c.Den)
	return q
}

// TimeOf is the earliest simulated time at which the counter reads tick or
// more (ceil(tick*Den/Num)), saturating at ktime.Max.
func (c Clock) TimeOf(tick uint64) ktime.Time {
	hi, lo := bits.Mul64(tick, c.Den)
	if hi >= c.Num {
		return ktime.Max
	}
	q, r := bits.Div64(hi, lo, c.Num)
	if r != 0 {
		q++
	}
	if q > uint64(ktime.Max) {
		return ktime.Max
	}
	return ktime.Time(q)
}

// Ns is the duration of n ticks in nanoseconds, rounded down, saturating.
func (c Clock) Ns(n uint64) int64 {
	hi, lo := bits.Mul64(n, c.Den)
	if hi >= c.Num {
		return int64(ktime.Max)
	}
	q, _ := bits.Div64(hi, lo, c.Num)
	if q > uint64(ktime.Max) {
		return int64(ktime.Max)
	}
	return int64(q)
}
