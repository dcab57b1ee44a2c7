// Package ktime holds tickemu's notion of time: simulated nanoseconds since boot
// (the kernel's ktime_t on CLOCK_MONOTONIC), HZ and jiffies.
//
// Nothing here reads a wall clock. All arithmetic saturates at Max instead of
// wrapping, as ktime_add_safe() does in kernel/time/hrtimer.c.
package ktime

import (
	"fmt"
	"math"
)

// Time is a point in simulated CLOCK_MONOTONIC time, in nanoseconds since boot.
type Time int64

// Max is KTIME_MAX: "never". A timer or device programmed for Max is off.
const Max Time = math.MaxInt64

// Common durations, in nanoseconds.
const (
	Nanosecond  int64 = 1
	Microsecond int64 = 1000
	Millisecond int64 = 1000 * Microsecond
	Second      int64 = 1000 * Millisecond
)

// Add returns t+d, saturating at Max (kernel/time/hrtimer.c:ktime_add_safe()).
func (t Time) Add(d int64) Time {
	if t == Max {
		return Max
	}
	s := int64(t) + d
	if d > 0 && s < int64(t) {
		return Max
	}
	if s < 0 && d < 0 && t >= 0 {
		return 0
	}
	return Time(s)
}

// AddCost returns t+d for a cost d >= 0 (a plugin's configured cost, which
// its Configure refuses when negative), saturating at Max: Add without the
// branches for a negative d, for the per-call paths that add costs. A
// negative d is the caller's bug; the answer is then Max.
func (t Time) AddCost(d int64) Time {
	if s := t + Time(d); s >= t && t != Max {
		return s
	}
	return Max
}

// Sub returns t-u in nanoseconds.
func (t Time) Sub(u Time) int64 { return int64(t) - int64(u) }

// String formats t as seconds with nine decimals, or "max".
func (t Time) String() string {
	if t == Max {
		return "max"
	}
	sign := ""
	v := int64(t)
	if v < 0 {
		sign, v = "-", -v
	}
	return fmt.Sprintf("%s%d.%09d", sign, v/Second, v%Second)
}

// TickNsec is TICK_NSEC for a given HZ: (NSEC_PER_SEC + HZ/2) / HZ
// (include/linux/jiffies.h). 1,000,000 at HZ=1000; 3,333,333 at HZ=300.
func TickNsec(hz int) int64 {
	return (Second + int64(hz)/2) / int64(hz)
}

// ValidHZ reports whether hz is one of the kernel's CONFIG_HZ choices.
func ValidHZ(hz int) bool {
	switch hz {
	case 100, 250, 300, 1000:
		return true
	}
	return false
}

// InitialJiffies is INITIAL_JIFFIES on a 64-bit kernel: (unsigned long)(unsigned int)(-300*HZ)
// (include/linux/jiffies.h). Starting there exercises the 32-bit wrap paths, as the kernel does.
func InitialJiffies(hz int) uint64 {
	return uint64(uint32(int32(-300 * hz)))
}

// FormatDuration formats a nanosecond count with the largest unit that keeps it exact
// ("250us", "4ms", "1.5s" is written "1500ms").
func FormatDuration(ns int64) string {
	switch {
	case ns == 0:
		return "0ns"
	case ns%Second == 0:
		return fmt.Sprintf("%ds", ns/Second)
	case ns%Millisecond == 0:
		return fmt.Sprintf("%dms", ns/Millisecond)
	case ns%Microsecond == 0:
		return fmt.Sprintf("%dus", ns/Microsecond)
	}
	return fmt.Sprintf("%dns", ns)
}
