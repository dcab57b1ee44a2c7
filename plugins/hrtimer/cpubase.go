package hrtimer

import (
	"math"
	"math/bits"

	"github.com/tickemu/tickemu/framework/sdk"
	"github.com/tickemu/tickemu/framework/sdk/ktime"
)

// Clock base indexes: enum hrtimer_base_type (include/linux/hrtimer_defs.h).
// The index is also the bit number in active_bases.
const (
	baseMonotonic = iota
	baseRealtime
	baseBoottime
	baseTAI
	baseMonotonicSoft
	baseRealtimeSoft
	baseBoottimeSoft
	baseTAISoft
	maxClockBases
)

// Masks over active_bases (top of kernel/time/hrtimer.c).
const (
	maskShift  = baseMonotonicSoft
	activeHard = uint8(1<<maskShift - 1) // HRTIMER_ACTIVE_HARD 0x0F
	activeSoft = activeHard << maskShift // HRTIMER_ACTIVE_SOFT 0xF0
	activeAll  = activeHard | activeSoft // HRTIMER_ACTIVE_ALL 0xFF
)

// Bases a clock change moves (kernel/time/tick-internal.h).
const (
	// wallBases is CLOCK_SET_WALL: REALTIME and TAI, hard and soft.
	wallBases = uint8(1<<baseRealtime | 1<<baseRealtimeSoft | 1<<baseTAI | 1<<baseTAISoft)
	// bootBases is CLOCK_SET_BOOT: BOOTTIME, hard and soft.
	bootBases = uint8(1<<baseBoottime | 1<<baseBoottimeSoft)
)

// never is KTIME_MAX in the int64 domain used for monotonic comparisons.
const never = int64(ktime.Max)

// cpuBase models struct hrtimer_cpu_base (include/linux/hrtimer_defs.h) for one
// CPU. All fields are owned by the plugin; the simulator is single-threaded, so
// the kernel's cpu_base->lock has no counterpart.
//
// Layout: on a big machine every CPU's base is visited once per wakeup and
// evicted from the L1 cache in between, so each line a call touches is a miss.
// The record is 576 bytes (nine lines) and the bases are allocated side by
// side (newCPUBases), so each starts on a line boundary. Start touches two of
// its lines: line 0 (the next-event caches, the operations' first device
// write, the flags and the small counts) and line 2 (the CLOCK_MONOTONIC
// queue with room for its first timers, and Start's counters); the interrupt
// touches those and line 1 (its first expiry and first device write, inline,
// and the hard expiry count): TestCPUBaseLayout. The answers' Program and
// Expired lists point into the record while they have one entry, the common
// case, so that no separate buffer line is touched either.
type cpuBase struct {
	// Line 0.
	//
	// expiresNext is the CLOCK_MONOTONIC time the clockevent is believed to be
	// programmed for (KTIME_MAX: nothing). nextTimer is the timer that defined
	// it; like the kernel's pointer it may be stale after a remote removal.
	expiresNext ktime.Time
	nextTimer   *timer
	// softirqExpiresNext caches the first soft expiry; the interrupt raises
	// HRTIMER_SOFTIRQ when now >= it. Its staleness is regression 46eb1701c046.
	softirqExpiresNext ktime.Time
	softirqNextTimer   *timer

	// opFirst is the first entry of the operations' Program buffer (Start,
	// Cancel, RetriggerNextEvent; see Plugin.prog).
	opFirst [1]ktime.Time

	// cwsSeq is the clock_was_set_seq (an unsigned int, as the kernel's)
	// the offsets in off belong to; hrtimer_update_base() refreshes them
	// when the timekeeper's sequence moved.
	cwsSeq uint32
	// nrEvents is a kernel statistic with the kernel's width
	// (/proc/timer_list shows it; the others are with the cold fields).
	nrEvents uint32
	cpu      int32
	// nReclaim is len(reclaim), the length the interrupt tests.
	nReclaim uint16

	// activeBases has bit i set while bases[i] holds a timer.
	activeBases uint8

	inHrtirq         bool // inside hrtimer_interrupt() (never true between calls)
	hangDetected     bool // the last interrupt declared a hang; blocks __hrtimer_reprogram()
	softirqActivated bool // HRTIMER_SOFTIRQ raised and not yet run
	// tryPending: the last Interrupt or InterruptETIME of the proportional
	// era ended with tick_program_event(expires_next, 0) for the host to try;
	// irqEntry and irqRetries are the interrupt's entry_time and retries.
	tryPending bool

	// Line 1: the interrupt family's first expiry and first device write,
	// and the count of hard expiries it bumps.
	expFirst     [1]sdk.HRExpiry
	irqFirst     [1]ktime.Time
	expiriesHard int64

	// Line 2: monoBuf, the first backing array of the CLOCK_MONOTONIC
	// queue's heap, the two counters every Start bumps (the others are in
	// stats), and that queue (bases[0]); the other bases follow.
	monoBuf      [3]*timer
	starts       int64
	deviceWrites int64
	bases        [maxClockBases]timerQueue

	stats stats

	// opMore, irqMore and expMore hold the whole lists once they have a
	// second entry.
	opMore, irqMore []ktime.Time
	expMore         []sdk.HRExpiry

	// reclaim lists timers that went inactive on this CPU and may be recycled.
	reclaim []*timer

	// off are this CPU's copies of the timekeeper offsets (clock_base[].offset).
	off sdk.ClockOffsets

	irqEntry    ktime.Time
	irqRetries  int
	nrRetries   uint16
	nrHangs     uint16
	maxHangTime uint32

	_ [32]byte // to 576 bytes
}

// stats are the plugin's own 64-bit counters but starts, deviceWrites and
// expiriesHard.
type stats struct {
	retryPasses, cancels        int64
	expiriesSoft, softirqRaises int64
	migrated                    int64
}

// newCPUBases returns n bases, side by side in one allocation.
func newCPUBases(n int) []*cpuBase {
	all := make([]cpuBase, n)
	out := make([]*cpuBase, n)
	for i := range all {
		// hrtimers_cpu_starting(): nothing programmed, nothing cached.
		cb := &all[i]
		cb.cpu, cb.expiresNext, cb.softirqExpiresNext = int32(i), ktime.Max, ktime.Max
		cb.bases[baseMonotonic].h = cb.monoBuf[:0]
		out[i] = cb
	}
	return out
}

// offset is clock_base[idx].offset: the base clock minus CLOCK_MONOTONIC.
func (cb *cpuBase) offset(idx int) int64 {
	switch idx & 3 {
	case baseRealtime:
		return cb.off.Real
	case baseBoottime:
		return cb.off.Boot
	case baseTAI:
		return cb.off.TAI
	}
	return 0
}

func (cb *cpuBase) setNextTimer(t *timer) {
	if cb.nextTimer == t {
		return
	}
	if cb.nextTimer != nil {
		cb.nextTimer.refs--
	}
	cb.nextTimer = t
	if t != nil {
		t.refs++
	}
}

func (cb *cpuBase) setSoftirqNextTimer(t *timer) {
	if cb.softirqNextTimer == t {
		return
	}
	if cb.softirqNextTimer != nil {
		cb.softirqNextTimer.refs--
	}
	cb.softirqNextTimer = t
	if t != nil {
		t.refs++
	}
}

// toMono converts an expiry in a base's clock to CLOCK_MONOTONIC
// (ktime_sub(expires, base->offset)). KTIME_MAX stays "never".
//
// Divergence: the kernel subtracts the offset from KTIME_MAX too; a REALTIME
// timer at KTIME_MAX then looks like a (very distant) real expiry.
func toMono(exp ktime.Time, off int64) int64 {
	if off == 0 || exp == ktime.Max {
		return int64(exp) // CLOCK_MONOTONIC's offset, the common case; KTIME_MAX is never
	}
	v := int64(exp) - off
	switch {
	case off < 0 && v < int64(exp): // overflow past KTIME_MAX
		return never
	case off > 0 && v > int64(exp): // wrapped below the minimum
		return math.MinInt64
	}
	return v
}

// addSafe is ktime_add_safe() on raw int64 values, saturating at KTIME_MAX.
func addSafe(a, b int64) int64 {
	if b == 0 {
		return a // CLOCK_MONOTONIC's offset, the common case
	}
	if a == never || b == never {
		return never
	}
	s := a + b
	if b > 0 && s < a {
		return never
	}
	if b < 0 && s > a {
		return math.MinInt64
	}
	return s
}

// clampTime turns a raw monotonic value into a ktime.Time, clamped at 0 as the
// kernel clamps negative next events (clock_was_set() can move them below 0).
func clampTime(v int64) ktime.Time {
	if v < 0 {
		return 0
	}
	return ktime.Time(v)
}

// nextEventBase models __hrtimer_next_event_base() for a query
// (hrtimer_next_event_without()): the earliest expiry of the active bases in
// mask, skipping exclude, seeded with expiresNext; it changes nothing.
func (cb *cpuBase) nextEventBase(exclude *timer, active uint8, expiresNext int64) int64 {
	for ; active != 0; active &= active - 1 {
		idx := bits.TrailingZeros8(active) // for_each_active_base(): lowest index first
		q := &cb.bases[idx]
		t := q.first()
		if t == nil {
			continue
		}
		if t == exclude {
			if t = q.second(); t == nil {
				continue
			}
		}
		if e := toMono(t.expires, cb.offset(idx)); e < expiresNext {
			expiresNext = e
		}
	}
	if expiresNext < 0 {
		expiresNext = 0
	}
	return expiresNext
}

// firstEvent is __hrtimer_next_event_base() over the active bases in active
// with no exclude, seeded with expiresNext: the earliest expiry, clamped at 0,
// and the timer that defined it, the last to improve on the minimum (nil when
// none beat the seed). With update set the kernel stores each improving timer
// in next_timer (or softirq_next_timer) as it goes; the caller stores the last
// one once, which leaves the same pointer.
func (cb *cpuBase) firstEvent(active uint8, expiresNext int64) (int64, *timer) {
	var win *timer
	if active == 1<<baseMonotonic {
		// Only CLOCK_MONOTONIC, the common case: its offset is 0, so the
		// expiry is already monotonic (toMono(e, 0) == e, KTIME_MAX too).
		if t := cb.bases[baseMonotonic].first(); t != nil && int64(t.expires) < expiresNext {
			expiresNext, win = int64(t.expires), t
		}
		return max(expiresNext, 0), win
	}
	for ; active != 0; active &= active - 1 {
		idx := bits.TrailingZeros8(active) // for_each_active_base(): lowest index first
		t := cb.bases[idx].first()
		if t == nil {
			continue
		}
		if e := toMono(t.expires, cb.offset(idx)); e < expiresNext {
			expiresNext, win = e, t
		}
	}
	if expiresNext < 0 {
		expiresNext = 0
	}
	return expiresNext, win
}

// getNextEvent models __hrtimer_get_next_event(cpu_base, mask): it recomputes
// the next_timer pointers but not the expires_next caches.
func (cb *cpuBase) getNextEvent(mask uint8) ktime.Time {
	var next *timer
	e := never
	// A mask with no active base leaves e as it is (never, or an already
	// clamped soft minimum): __hrtimer_next_event_base() loops over nothing.
	if !cb.softirqActivated && mask&activeSoft != 0 {
		if a := cb.activeBases & activeSoft; a != 0 {
			e, next = cb.firstEvent(a, never)
		}
		cb.setSoftirqNextTimer(next)
	}
	if mask&activeHard != 0 {
		// next_timer starts as the soft winner; a hard timer before the
		// soft minimum replaces it.
		if a := cb.activeBases & activeHard; a != 0 {
			var win *timer
			if e, win = cb.firstEvent(a, e); win != nil {
				next = win
			}
		}
		cb.setNextTimer(next)
	}
	return ktime.Time(e)
}

// updateNextEvent models hrtimer_update_next_event() (46eb1701c046): the soft
// and hard minima are computed separately and softirq_expires_next is always
// refreshed unless the softirq is already raised.
func (cb *cpuBase) updateNextEvent() ktime.Time {
	soft := ktime.Max
	if !cb.softirqActivated {
		if cb.activeBases&activeSoft != 0 {
			soft = cb.getNextEvent(activeSoft)
		} else {
			cb.setSoftirqNextTimer(nil) // getNextEvent(activeSoft) of no soft timer
		}
		cb.softirqExpiresNext = soft
	}
	// __hrtimer_get_next_event(cpu_base, HRTIMER_ACTIVE_HARD), then the soft
	// timer when it is earlier: next_timer is stored once, at the end.
	e, next := never, (*timer)(nil)
	if a := cb.activeBases & activeHard; a == 1<<baseMonotonic {
		// firstEvent's CLOCK_MONOTONIC-only case in line (no call).
		if t := cb.bases[baseMonotonic].first(); t != nil && int64(t.expires) < never {
			e, next = max(int64(t.expires), 0), t
		}
	} else if a != 0 {
		e, next = cb.firstEvent(a, never)
	}
	if ktime.Time(e) > soft {
		e, next = int64(soft), cb.softirqNextTimer
	}
	cb.setNextTimer(next)
	return ktime.Time(e)
}

// staleForceNextEvent is the next-event evaluation of hrtimer_force_reprogram()
// before 46eb1701c046 (v5.10): the cache is refreshed only when the overall
// first timer is soft.
func (cb *cpuBase) staleForceNextEvent() ktime.Time {
	e := cb.getNextEvent(activeAll)
	if cb.nextTimer != nil && cb.nextTimer.soft {
		// "When the softirq is activated, hrtimer has to be programmed with
		// the first hard hrtimer because soft timer interrupt could occur
		// too late."
		if cb.softirqActivated {
			e = cb.getNextEvent(activeHard)
		} else {
			cb.softirqExpiresNext = e
		}
	}
	return e
}

// queryNextEvent is the side-effect-free minimum over the bases in mask,
// skipping exclude, with soft bases ignored while the softirq is pending
// (hrtimer_next_event_without()).
func (cb *cpuBase) queryNextEvent(exclude *timer, mask uint8) ktime.Time {
	e := never
	if !cb.softirqActivated && mask&activeSoft != 0 {
		e = cb.nextEventBase(exclude, cb.activeBases&activeSoft, e)
	}
	if mask&activeHard != 0 {
		e = cb.nextEventBase(exclude, cb.activeBases&activeHard, e)
	}
	return ktime.Time(e)
}
